package hubclient

import (
	"crypto/tls"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"
	"google.golang.org/grpc/keepalive"

	"github.com/tetherproj/tether/internal/hubdial"
	"github.com/tetherproj/tether/internal/protocol"
)

// connectBackoff is gRPC's own backoff between attempts to open the
// connection, capped like the agent's (protocol.MaxReconnectDelay) instead
// of gRPC's default 120 s: after a long partition the connection is tried
// again within 30 s (plus 20 % jitter) of the link healing, so the cluster
// is back within one lease period. The fault suite's 10-minute partition
// took 2m22s to converge with the default. With several hub addresses
// each address has its own backoff: a dead one never delays the others.
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

// pickFirstInOrder is the service config of a connection to several hub
// addresses in the order the client chose (replicaOrder): after a Goodbye
// SHUTDOWN or REBALANCE, the address that said it comes last.
const pickFirstInOrder = `{"loadBalancingConfig": [{"pick_first": {}}]}`

// Dial returns a connection to the hub at addrs (host:port each, as
// agent.Config validates them), over TLS with tlsCfg; it connects lazily,
// on the first RPC. Several addresses are the replicas of one hub, tried
// in a shuffled order (hubdial.PickFirstShuffled); each address's
// certificate is verified for that address's host (internal/hubdial).
func Dial(addrs []string, tlsCfg *tls.Config, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	return hubdial.Dial(addrs, hubdial.PickFirstShuffled, tlsCfg, opts...)
}

// dial returns the client's connection to the hub: Dial with the stream's
// keepalive, message size and connection backoff. The addresses in avoid
// (those that said Goodbye SHUTDOWN or REBALANCE, moveon.go) are tried
// last, the others first in a shuffled order; none: all shuffled.
func dial(cfg Config, avoid []string) (*grpc.ClientConn, error) {
	opts := append([]grpc.DialOption{
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time:                protocol.KeepaliveTime,
			Timeout:             protocol.KeepaliveTimeout,
			PermitWithoutStream: true,
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvBytes)),
		grpc.WithConnectParams(connectBackoff),
	}, cfg.DialOptions...)
	if len(avoid) == 0 || len(cfg.Addrs) == 1 {
		return Dial(cfg.Addrs, cfg.TLS, opts...)
	}
	return hubdial.Dial(replicaOrder(cfg.Addrs, avoid, rand.Shuffle), pickFirstInOrder, cfg.TLS, opts...)
}
