package clientapi

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	"k8s.io/apimachinery/pkg/util/validation"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/revocation"
)

// User certificate lifetimes.
const (
	// defaultUserLifetime is a user certificate's lifetime when none is
	// asked for: a year, as the API documents.
	defaultUserLifetime = 365 * 24 * time.Hour
	// maxUserLifetime caps it, so that a certificate nobody revokes
	// (RevokeUser) still ends.
	maxUserLifetime = 2 * 365 * 24 * time.Hour
)

// userService implements hubv1.UserServiceServer: admins issue client
// certificates for users, signed by the hub's CA, set their roles
// (hub/roles) and revoke them (hub/revocation).
type userService struct {
	hubv1.UnimplementedUserServiceServer
	b *backend
}

// CreateUser stores name's role (with stored roles) and signs the
// caller's CSR (or a new key's, returned with the certificate) as name.
// Without stored roles the certificate carries the role, which then can
// only be fleet-wide admin or read-only.
func (s userService) CreateUser(ctx context.Context, req *hubv1.CreateUserRequest) (*hubv1.CreateUserResponse, error) {
	caller, err := s.b.authorize(ctx)
	if err != nil {
		return nil, grpcStatus(err)
	}
	reg, err := s.b.registry(ctx, "UserService.CreateUser")
	if err != nil {
		return nil, grpcStatus(err)
	}
	id, lifetime, err := userRequest(req)
	if err != nil {
		return nil, grpcStatus(err)
	}
	if id, err = s.b.storeRole(ctx, caller, id, req.GetRole(), req.GetNamespaces()); err != nil {
		return nil, grpcStatus(err)
	}
	ca := reg.CA()
	var issued pki.Issued
	if len(req.GetCsrPem()) > 0 {
		issued, err = ca.SignCSR(req.GetCsrPem(), id, lifetime)
	} else {
		issued, err = ca.IssueClient(id, lifetime)
	}
	if err != nil {
		return nil, grpcStatus(fmt.Errorf("%w: %v", ErrInvalid, err))
	}
	s.b.log.Info("user certificate issued", "user", id.Name, "kind", id.Kind, "not_after", issued.Cert.NotAfter)
	return &hubv1.CreateUserResponse{
		CertificatePem: issued.CertPEM, PrivateKeyPem: issued.KeyPEM, CaBundlePem: ca.CertPEM,
		NotAfter: timestamppb.New(issued.Cert.NotAfter),
	}, nil
}

// userRequest checks a CreateUser request and returns the identity and
// lifetime to issue.
func userRequest(req *hubv1.CreateUserRequest) (pki.Identity, time.Duration, error) {
	id := pki.Identity{Name: req.GetName()}
	if _, err := grantOf(req.GetRole(), req.GetNamespaces()); err != nil {
		return id, 0, err
	}
	if errs := validation.IsDNS1123Subdomain(id.Name); len(errs) > 0 {
		return id, 0, fmt.Errorf("%w: user name %q: %s", ErrInvalid, id.Name, strings.Join(errs, "; "))
	}
	lifetime := defaultUserLifetime
	if req.GetTtl() != nil {
		lifetime = req.GetTtl().AsDuration()
	}
	if lifetime <= 0 || lifetime > maxUserLifetime {
		return id, 0, fmt.Errorf("%w: ttl %s: want more than 0 and at most %s", ErrInvalid, lifetime, maxUserLifetime)
	}
	return id, lifetime, nil
}

// RevokeUser revokes every certificate of a user name issued until now, on
// every replica (RefuseRevoked refuses them). An admin cannot revoke the
// name they are connected as: that would lock them out with nobody to
// undo it.
func (s userService) RevokeUser(ctx context.Context, req *hubv1.RevokeUserRequest) (*hubv1.RevokeUserResponse, error) {
	caller, l, err := s.b.revocations(ctx, "UserService.RevokeUser")
	if err != nil {
		return nil, grpcStatus(err)
	}
	name := req.GetName()
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, grpcStatus(fmt.Errorf("%w: user name %q: %s", ErrInvalid, name, strings.Join(errs, "; ")))
	}
	if name == caller.Name {
		return nil, grpcStatus(fmt.Errorf("%w: you are connected as user %q: revoking yourself would lock you out; revoke with another admin's credentials", ErrInvalid, name))
	}
	r, err := l.Revoke(ctx, name, caller.Name)
	if err != nil {
		return nil, grpcStatus(err)
	}
	return &hubv1.RevokeUserResponse{Revoked: revokedView(r)}, nil
}

// ListRevokedUsers returns the stored revocations, by name.
func (s userService) ListRevokedUsers(ctx context.Context, _ *hubv1.ListRevokedUsersRequest) (*hubv1.ListRevokedUsersResponse, error) {
	_, l, err := s.b.revocations(ctx, "UserService.ListRevokedUsers")
	if err != nil {
		return nil, grpcStatus(err)
	}
	all, err := l.All(ctx)
	if err != nil {
		return nil, grpcStatus(err)
	}
	resp := &hubv1.ListRevokedUsersResponse{}
	for _, r := range all {
		resp.Revoked = append(resp.Revoked, revokedView(r))
	}
	return resp, nil
}

// revocations authorizes an admin call of method and returns the caller
// and the revocations, or ErrUnimplemented when the hub runs without them.
func (b *backend) revocations(ctx context.Context, method string) (pki.Identity, *revocation.List, error) {
	c, err := b.authorize(ctx)
	if err != nil {
		return c.id, nil, err
	}
	id := c.id
	if b.cfg.Revocations == nil {
		return id, nil, fmt.Errorf("%w: %s is not served: this hub runs without user revocations", ErrUnimplemented, method)
	}
	return id, b.cfg.Revocations, nil
}

func revokedView(r revocation.Revoked) *hubv1.RevokedUser {
	return &hubv1.RevokedUser{Name: r.Name, RevokeTime: timestamppb.New(r.At), RevokedBy: r.By}
}
