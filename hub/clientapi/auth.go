package clientapi

import (
	"context"
	"fmt"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/tetherproj/tether/hub/pki"
)

// access is what an RPC needs: reading or writing.
type access int

const (
	read access = iota
	write
)

func (a access) String() string {
	if a == write {
		return "write"
	}
	return "read"
}

// authorize returns the identity of the caller's verified client
// certificate if its role allows a: admins read and write, viewers read,
// agents (and anything else) neither. The identity only ever comes from the
// certificate (DESIGN §8).
func authorize(ctx context.Context, a access) (pki.Identity, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return pki.Identity{}, fmt.Errorf("%w: no peer information", ErrUnauthenticated)
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return pki.Identity{}, fmt.Errorf("%w: the connection is not TLS; connect with the client certificate of your credentials file", ErrUnauthenticated)
	}
	if len(info.State.VerifiedChains) == 0 || len(info.State.PeerCertificates) == 0 {
		return pki.Identity{}, fmt.Errorf("%w: no verified client certificate; use the credentials file the hub wrote (admin.conf) or one from `tetherctl user create`", ErrUnauthenticated)
	}
	id, err := pki.IdentityOf(info.State.PeerCertificates[0])
	if err != nil {
		return pki.Identity{}, fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	switch {
	case id.Kind == pki.KindAdmin:
		return id, nil
	case id.Kind == pki.KindViewer && a == read:
		return id, nil
	case id.Kind == pki.KindViewer:
		return id, fmt.Errorf("%w: user %q has the read-only role; %s needs an admin", ErrPermissionDenied, id.Name, a)
	default:
		return id, fmt.Errorf("%w: %s certificate %q may not use the client API", ErrPermissionDenied, id.Kind, id.Name)
	}
}
