package clientapi

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/roles"
)

// caller is an authenticated user and what it may do.
type caller struct {
	id    pki.Identity
	grant roles.Grant
}

// may decides, with roles.Decide, whether the caller may v an object of
// kind in namespace ns ("" for a cluster-scoped kind).
func (c caller) may(v roles.Verb, kind, ns string) error {
	if err := roles.Decide(c.id.Name, c.grant, v, roles.Target{Kind: kind, Namespace: ns}); err != nil {
		return fmt.Errorf("%w: %s", ErrPermissionDenied, strings.TrimPrefix(err.Error(), roles.ErrDenied.Error()+": "))
	}
	return nil
}

// reads reports whether the caller may read an object of kind in
// namespace ns (roles.Allows): the filter of lists and watches.
func (c caller) reads(kind, ns string) bool {
	return roles.Allows(c.grant, roles.Read, roles.Target{Kind: kind, Namespace: ns})
}

// view is how much of objects the caller sees: the viewer role sees
// Secrets without their data.
func (c caller) view() view {
	if c.grant.Role == roles.Viewer {
		return redactedView
	}
	return fullView
}

// authorize authenticates the caller of the RPC ctx belongs to and checks
// what its method needs (methodRules) against the caller's grant. The
// identity only ever comes from the verified certificate (DESIGN §8), the
// grant from the stored roles (Config.Roles) or else the certificate
// (roles.CertGrant). Methods that touch objects decide on each of them
// afterwards (caller.may).
func (b *backend) authorize(ctx context.Context) (caller, error) {
	id, err := identityOf(ctx)
	if err != nil {
		return caller{}, err
	}
	if !id.Kind.IsUser() {
		return caller{id: id}, fmt.Errorf("%w: %s certificate %q may not use the client API", ErrPermissionDenied, id.Kind, id.Name)
	}
	c, err := b.callerOf(ctx, id)
	if err != nil {
		return c, err
	}
	method, _ := grpc.Method(ctx)
	rule, ok := methodRules[method]
	if !ok {
		return c, fmt.Errorf("%w: method %q has no authorization rule", ErrPermissionDenied, method)
	}
	return c, c.may(rule.verb, rule.kind, rule.namespace())
}

// callerOf returns id with its current grant.
func (b *backend) callerOf(ctx context.Context, id pki.Identity) (caller, error) {
	if b.cfg.Roles == nil {
		return caller{id: id, grant: roles.CertGrant(id)}, nil
	}
	g, err := b.cfg.Roles.GrantOf(ctx, id)
	if err != nil {
		return caller{id: id}, err
	}
	return caller{id: id, grant: g}, nil
}

// identityOf is the identity of the caller's verified client certificate.
func identityOf(ctx context.Context) (pki.Identity, error) {
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
	return id, nil
}

// mayAll decides on every object of a request whose kind and namespace
// are known: the first refused fails the request, naming the object.
func mayAll(c caller, v roles.Verb, items []*item) error {
	for _, it := range items {
		if it.key.Kind == "" {
			continue // rejected before its kind was known; nothing is stored
		}
		if err := c.may(v, it.key.Kind, it.key.Namespace); err != nil {
			return fmt.Errorf("%s: %w", describe(it.ref), err)
		}
	}
	return nil
}
