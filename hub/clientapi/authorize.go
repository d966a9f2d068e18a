package clientapi

import (
	"context"

	"github.com/tetherproj/tether/hub/pki"
)

// Access is what a caller needs of the hub: Read or Write. The hub's
// other doors (the member proxy, hub/memberproxy) ask Authorize for it, so
// that every door has the one role rule of authorize.
type Access = access

// Read and Write are the two kinds of Access.
const (
	Read  Access = read
	Write Access = write
)

// Authorize is the client API's role check for the hub's other doors:
// ctx carries the caller's TLS peer (peer.NewContext for a request that
// did not come over gRPC). Errors wrap ErrUnauthenticated or
// ErrPermissionDenied.
func Authorize(ctx context.Context, a Access) (pki.Identity, error) {
	return authorize(ctx, a)
}
