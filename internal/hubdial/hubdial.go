// Package hubdial opens a gRPC connection to a hub given as one address or
// as the addresses of its replicas, over TLS: the agent (agent/hubclient)
// and the public client package dial the same way, so that both accept the
// same lists (internal/hubaddr) and check each replica's certificate for
// that replica's host. It imports gRPC and the standard library.
package hubdial

import (
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// replicasScheme is the target scheme of a connection to several hub
// addresses; its resolver is built per connection (grpc.WithResolvers),
// never registered globally.
const replicasScheme = "tether-hub-replicas"

// PickFirstShuffled is the service config of a connection to several hub
// addresses: gRPC's pick_first over the addresses in an order shuffled
// once per connection. An agent holds one long-lived stream, so agents
// spread across the replicas by their shuffled first choice; when the
// replica of the stream goes, the next stream takes the first address of
// the list that answers, an address that refuses (or does not answer
// within pick_first's 250 ms happy-eyeballs delay) being passed over at
// once, not after a backoff.
const PickFirstShuffled = `{"loadBalancingConfig": [{"pick_first": {"shuffleAddressList": true}}]}`

// Dial returns a connection to the hub at addrs (host:port each, as
// hubaddr.Validate checks them), over TLS with tlsCfg; it connects lazily,
// on the first RPC. One address is dialed as it is (gRPC's dns resolver,
// as with a single hub or a load balancer in front of the replicas; a
// tlsCfg.ServerName is then honoured); several are the replicas of one
// hub, balanced by serviceConfig (PickFirstShuffled, say), each address's
// certificate verified for that address's host: gRPC sets the TLS server
// name per address, overriding tlsCfg.ServerName.
func Dial(addrs []string, serviceConfig string, tlsCfg *tls.Config, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("dial hub: no hub address")
	}
	target, resolve := hubTarget(addrs, serviceConfig)
	all := append([]grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg))}, resolve...)
	conn, err := grpc.NewClient(target, append(all, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("dial hub %s: %w", strings.Join(addrs, ","), err)
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
			host = addr // refused by hubaddr.Validate; gRPC reports the dial error
		}
		endpoints[i] = resolver.Endpoint{Addresses: []resolver.Address{{Addr: addr, ServerName: host}}}
	}
	r := manual.NewBuilderWithScheme(replicasScheme)
	r.InitialState(resolver.State{Endpoints: endpoints})
	return replicasScheme + ":///hub", []grpc.DialOption{grpc.WithResolvers(r), grpc.WithDefaultServiceConfig(serviceConfig)}
}
