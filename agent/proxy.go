package agent

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/memberproxy"
	"github.com/tetherproj/tether/internal/protocol"
)

// Window sizes of the member proxy's connection to the hub: static, so
// that each tunnel buffers at most proxyStreamWindow (1 MiB) and the
// connection proxyConnWindow (16 MiB), instead of BDP estimation growing
// every stream's window to 16 MiB.
const (
	proxyStreamWindow = 1 << 20
	proxyConnWindow   = 16 << 20
)

// memberProxy returns the member proxy's runner (agent/memberproxy) over
// a connection to the hub of its own, with the stream's keepalive: nil
// when the member side serves no proxy (--member-proxy=off).
func (a *Agent) memberProxy() (func(context.Context) error, error) {
	if a.member.Proxy == nil {
		return nil, nil
	}
	tlsCfg, err := newCertFiles(a.cfg).tlsConfig()
	if err != nil {
		return nil, err
	}
	conn, err := hubclient.Dial(a.cfg.HubAddrs, tlsCfg,
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: protocol.KeepaliveTime, Timeout: protocol.KeepaliveTimeout, PermitWithoutStream: true}),
		grpc.WithInitialWindowSize(proxyStreamWindow), grpc.WithInitialConnWindowSize(proxyConnWindow))
	if err != nil {
		return nil, fmt.Errorf("member proxy connection: %w", err)
	}
	mode, _ := memberproxy.ParseMode(a.cfg.MemberProxy) // Validate checked it
	p := memberproxy.New(conn, a.member.Proxy, mode, a.cfg.AgentVersion, a.log)
	return func(ctx context.Context) error {
		defer conn.Close()
		return p.Run(ctx)
	}, nil
}
