package hubclient

import (
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

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

// replicasScheme is the target scheme of a connection to several hub
// addresses; its resolver is built per connection (grpc.WithResolvers),
// never registered globally.
const replicasScheme = "tether-hub-replicas"

// pickFirstShuffled is the service config of a connection to several hub
// addresses: gRPC's pick_first over the addresses in an order shuffled
// once per connection. An agent holds one long-lived stream, so agents
// spread across the replicas by their shuffled first choice; when the
// replica of the stream goes, the next stream takes the first address of
// the list that answers, an address that refuses (or does not answer
// within pick_first's 250 ms happy-eyeballs delay) being passed over at
// once, not after a backoff.
const pickFirstShuffled = `{"loadBalancingConfig": [{"pick_first": {"shuffleAddressList": true}}]}`

// pickFirstInOrder is the service config of a connection to several hub
// addresses in the order the client chose (replicaOrder): after a Goodbye
// SHUTDOWN or REBALANCE, the address that said it comes last.
const pickFirstInOrder = `{"loadBalancingConfig": [{"pick_first": {}}]}`

// Dial returns a connection to the hub at addrs (host:port each, as
// agent.Config validates them), over TLS with tlsCfg; it connects lazily,
// on the first RPC. One address is dialed as it is (gRPC's dns resolver,
// as with a single hub or a load balancer in front of the replicas);
// several are the replicas of one hub, see pickFirstShuffled. Each
// address's certificate is verified for that address's host: gRPC sets
// the TLS server name per address, overriding tlsCfg.ServerName.
func Dial(addrs []string, tlsCfg *tls.Config, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	return dialWith(addrs, pickFirstShuffled, tlsCfg, opts...)
}

// dialWith is Dial with serviceConfig for several addresses.
func dialWith(addrs []string, serviceConfig string, tlsCfg *tls.Config, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("hubclient: dial: no hub address")
	}
	target, resolve := hubTarget(addrs, serviceConfig)
	all := append([]grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg))}, resolve...)
	conn, err := grpc.NewClient(target, append(all, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("hubclient: dial %s: %w", strings.Join(addrs, ","), err)
	}
	return conn, nil
}

// hubTarget returns the gRPC target of addrs and the options that resolve
// it: the address itself for one, else a resolver of this connection only
// that lists every address, each with its own host as the TLS server name,
// balanced by serviceConfig.
func hubTarget(addrs []string, serviceConfig string) (string, []grpc.DialOption) {
	if len(addrs) == 1 {
		return addrs[0], nil
	}
	endpoints := make([]resolver.Endpoint, len(addrs))
	for i, addr := range addrs {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr // refused by agent.Config.Validate; gRPC reports the dial error
		}
		endpoints[i] = resolver.Endpoint{Addresses: []resolver.Address{{Addr: addr, ServerName: host}}}
	}
	r := manual.NewBuilderWithScheme(replicasScheme)
	r.InitialState(resolver.State{Endpoints: endpoints})
	return replicasScheme + ":///hub", []grpc.DialOption{grpc.WithResolvers(r), grpc.WithDefaultServiceConfig(serviceConfig)}
}

// dial returns the client's connection to the hub: Dial with the stream's
// keepalive, message size and connection backoff. The addresses in avoid
// (those that said Goodbye SHUTDOWN or REBALANCE, moveon.go) are tried
// last, the others first in a shuffled order; none: all shuffled.
func dial(cfg Config, avoid []string) (*grpc.ClientConn, error) {
	opts := append([]grpc.DialOption{
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time:                keepaliveTime,
			Timeout:             keepaliveTimeout,
			PermitWithoutStream: true,
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvBytes)),
		grpc.WithConnectParams(connectBackoff),
	}, cfg.DialOptions...)
	if len(avoid) == 0 || len(cfg.Addrs) == 1 {
		return Dial(cfg.Addrs, cfg.TLS, opts...)
	}
	return dialWith(replicaOrder(cfg.Addrs, avoid, rand.Shuffle), pickFirstInOrder, cfg.TLS, opts...)
}
