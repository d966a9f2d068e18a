package clientapi

import (
	"context"
	"fmt"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/roles"
)

// AuthorizeDoor is the client API's decision for the hub's other doors
// (the member proxy, hub/memberproxy): the caller of ctx, authenticated by
// its verified client certificate (peer.NewContext for a request that did
// not come over gRPC) and holding its current grant (the stored roles, as
// every RPC), may v target (roles.Decide). It returns the identity and
// the grant decided with; errors wrap ErrUnauthenticated or
// ErrPermissionDenied.
func (s *Server) AuthorizeDoor(ctx context.Context, v roles.Verb, target roles.Target) (pki.Identity, roles.Grant, error) {
	b := s.Objects.b
	id, err := identityOf(ctx)
	if err != nil {
		return id, roles.Grant{}, err
	}
	if !id.Kind.IsUser() {
		return id, roles.Grant{}, fmt.Errorf("%w: %s certificate %q may not use the hub's doors", ErrPermissionDenied, id.Kind, id.Name)
	}
	c, err := b.callerOf(ctx, id)
	if err != nil {
		return id, c.grant, err
	}
	return id, c.grant, c.may(v, target.Kind, target.Namespace)
}
