package hubclient

import (
	"fmt"
	"time"

	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/tetherproj/tether/internal/protocol"
)

// Keepalive of the stream: a dead connection behind NAT (no FIN ever
// arrives) is found within keepaliveTime+keepaliveTimeout. The hub
// tolerates pings every 10 s or slower (hub/agentapi keepaliveMinTime).
const (
	keepaliveTime    = 30 * time.Second
	keepaliveTimeout = 10 * time.Second
)

// connectBackoff is gRPC's own backoff between attempts to open the
// connection, capped like the agent's (protocol.MaxReconnectDelay) instead
// of gRPC's default 120 s: after a long partition the connection is tried
// again within 30 s (plus 20 % jitter) of the link healing, so the cluster
// is back within one lease period. The fault suite's 10-minute partition
// took 2m22s to converge with the default.
var connectBackoff = grpc.ConnectParams{
	Backoff: grpcbackoff.Config{
		BaseDelay:  time.Second,
		Multiplier: 1.6,
		Jitter:     0.2,
		MaxDelay:   protocol.MaxReconnectDelay,
	},
	MinConnectTimeout: 20 * time.Second,
}

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
		grpc.WithConnectParams(connectBackoff),
	}, cfg.DialOptions...)
	conn, err := grpc.NewClient(cfg.Addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("hubclient: dial %s: %w", cfg.Addr, err)
	}
	return conn, nil
}
