package agentapi

import (
	"context"
	"fmt"

	"github.com/tetherproj/tether/hub/pki"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// clusterOf returns the cluster name of the verified agent certificate of
// the stream's peer: the only source of a stream's cluster (DESIGN §8).
func clusterOf(ctx context.Context) (string, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "", fmt.Errorf("%w: no peer information on the stream", ErrUnauthenticated)
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return "", fmt.Errorf("%w: the connection is not TLS; an agent connects with its client certificate", ErrUnauthenticated)
	}
	if len(info.State.VerifiedChains) == 0 || len(info.State.PeerCertificates) == 0 {
		return "", fmt.Errorf("%w: no verified client certificate; an agent connects with the certificate Register issued to it", ErrUnauthenticated)
	}
	id, err := pki.IdentityOf(info.State.PeerCertificates[0])
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	if id.Kind != pki.KindAgent {
		return "", fmt.Errorf("%w: certificate of %s %q is not an agent's; only agent certificates may open Connect", ErrPermissionDenied, id.Kind, id.Name)
	}
	return id.Name, nil
}

// ClusterOf is clusterOf for the hub's other agent-facing services (the
// member proxy's TunnelService, hub/memberproxy): one rule for which
// certificate speaks for which cluster. Errors wrap ErrUnauthenticated or
// ErrPermissionDenied.
func ClusterOf(ctx context.Context) (string, error) { return clusterOf(ctx) }
