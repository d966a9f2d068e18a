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
)

// User certificate lifetimes.
const (
	// defaultUserLifetime is a user certificate's lifetime when none is
	// asked for: a year, as the API documents.
	defaultUserLifetime = 365 * 24 * time.Hour
	// maxUserLifetime caps it: the hub has no user revocation yet, so a
	// certificate's expiry is the only end of a user's access.
	maxUserLifetime = 2 * 365 * 24 * time.Hour
)

// userService implements hubv1.UserServiceServer: admins issue client
// certificates for users, signed by the hub's CA. The role is in the
// certificate (pki.Identity); the hub stores nothing about users.
type userService struct {
	hubv1.UnimplementedUserServiceServer
	b *backend
}

// CreateUser signs the caller's CSR (or a new key's, returned with the
// certificate) as name with role.
func (s userService) CreateUser(ctx context.Context, req *hubv1.CreateUserRequest) (*hubv1.CreateUserResponse, error) {
	reg, err := s.b.registry(ctx, "UserService.CreateUser")
	if err != nil {
		return nil, grpcStatus(err)
	}
	id, lifetime, err := userRequest(req)
	if err != nil {
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
	s.b.log.Info("user certificate issued", "user", id.Name, "role", id.Kind, "not_after", issued.Cert.NotAfter)
	return &hubv1.CreateUserResponse{
		CertificatePem: issued.CertPEM, PrivateKeyPem: issued.KeyPEM, CaBundlePem: ca.CertPEM,
		NotAfter: timestamppb.New(issued.Cert.NotAfter),
	}, nil
}

// userRequest checks a CreateUser request and returns the identity and
// lifetime to issue.
func userRequest(req *hubv1.CreateUserRequest) (pki.Identity, time.Duration, error) {
	id := pki.Identity{Name: req.GetName()}
	switch req.GetRole() {
	case hubv1.Role_ROLE_ADMIN:
		id.Kind = pki.KindAdmin
	case hubv1.Role_ROLE_READ_ONLY:
		id.Kind = pki.KindViewer
	default:
		return id, 0, fmt.Errorf("%w: role %s: want admin or read-only", ErrInvalid, req.GetRole())
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
