package hubclient

import (
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
)

// Keepalive of the stream: a dead connection behind NAT (no FIN ever
// arrives) is found within keepaliveTime+keepaliveTimeout. The hub
// tolerates pings every 10 s or slower (hub/agentapi keepaliveMinTime).
const (
	keepaliveTime    = 30 * time.Second
	keepaliveTimeout = 10 * time.Second
)

// maxRecvBytes is the largest hub message the agent accepts: one
// WorkUpsert carries a whole work, which may be many objects (64 MiB; the
// gRPC default of 4 MiB is too small for a big CRD bundle).
const maxRecvBytes = 64 << 20

// dial returns the connection to the hub; it connects lazily, on the first
// stream.
func dial(cfg Config) (*grpc.ClientConn, error) {
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(credentials.NewTLS(cfg.TLS)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time:                keepaliveTime,
			Timeout:             keepaliveTimeout,
			PermitWithoutStream: true,
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvBytes)),
	}, cfg.DialOptions...)
	conn, err := grpc.NewClient(cfg.Addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("hubclient: dial %s: %w", cfg.Addr, err)
	}
	return conn, nil
}
