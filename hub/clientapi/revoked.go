package clientapi

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/revocation"
)

// RefuseRevoked returns the server options that refuse revoked users'
// certificates (hub/revocation) on every call of the server: a unary call
// or a new stream is UNAUTHENTICATED at once, and an open stream (Watch,
// WatchPlacement, WatchPlacements) ends with UNAUTHENTICATED as soon as this replica learns
// of the revocation. Calls without a user's certificate (agents,
// registration) pass untouched. The hub installs them on its one gRPC
// server; authorize then decides what the role may do.
func RefuseRevoked(l *revocation.List) []grpc.ServerOption {
	unary := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if cert := userCert(ctx); cert != nil {
			if err := l.Check(ctx, cert); err != nil {
				return nil, grpcStatus(revokedError(err))
			}
		}
		return h(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		cert := userCert(ss.Context())
		if cert == nil {
			return h(srv, ss)
		}
		if err := l.Check(ss.Context(), cert); err != nil {
			return grpcStatus(revokedError(err))
		}
		return serveRevocable(l, cert, srv, ss, h)
	}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream)}
}

// serveRevocable runs a user's stream with a context that ends when cert
// is revoked, and then returns the revocation instead of the handler's
// error.
func serveRevocable(l *revocation.List, cert *x509.Certificate, srv any, ss grpc.ServerStream, h grpc.StreamHandler) error {
	ctx, cancel := context.WithCancelCause(ss.Context())
	defer cancel(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		followRevocation(ctx, l, cert, cancel)
	}()
	err := h(srv, revocableStream{ServerStream: ss, ctx: ctx})
	cancel(nil)
	<-done
	if cause := context.Cause(ctx); errors.Is(cause, revocation.ErrRevoked) {
		return grpcStatus(revokedError(cause))
	}
	return err
}

// followRevocation checks cert again at every change of the revocations
// until ctx ends, and cancels it with the revocation once cert is revoked.
// A check that fails otherwise (the store, before the list is loaded) is
// tried again at the next change.
func followRevocation(ctx context.Context, l *revocation.List, cert *x509.Certificate, cancel context.CancelCauseFunc) {
	for {
		changed := l.Changed()
		if err := l.Check(ctx, cert); errors.Is(err, revocation.ErrRevoked) {
			cancel(err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// revocableStream is a server stream whose context ends at a revocation.
type revocableStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s revocableStream) Context() context.Context { return s.ctx }

// revokedError makes a failed revocation check the package's error.
func revokedError(err error) error {
	if errors.Is(err, revocation.ErrRevoked) {
		return fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	return err
}

// userCert returns the verified client certificate of ctx's peer when it
// is a user's (admin or viewer), or nil.
func userCert(ctx context.Context) *x509.Certificate {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.PeerCertificates) == 0 {
		return nil
	}
	id, err := pki.IdentityOf(info.State.PeerCertificates[0])
	if err != nil || !id.Kind.IsUser() {
		return nil
	}
	return info.State.PeerCertificates[0]
}
