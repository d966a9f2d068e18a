package clientapi

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"
	"k8s.io/apimachinery/pkg/util/validation"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/roles"
)

// grantOf is the grant a request asks for, validated.
func grantOf(role hubv1.Role, namespaces []string) (roles.Grant, error) {
	g := roles.Grant{Namespaces: namespaces}
	switch role {
	case hubv1.Role_ROLE_ADMIN:
		g.Role = roles.Admin
	case hubv1.Role_ROLE_EDITOR:
		g.Role = roles.Editor
	case hubv1.Role_ROLE_READ_ONLY:
		g.Role = roles.Viewer
	default:
		return g, fmt.Errorf("%w: role %s: want admin, editor or read-only (viewer)", ErrInvalid, role)
	}
	if err := g.Validate(); err != nil {
		return g, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return g, nil
}

// roleOf is the wire role of a stored one.
func roleOf(r roles.Role) hubv1.Role {
	switch r {
	case roles.Admin:
		return hubv1.Role_ROLE_ADMIN
	case roles.Editor:
		return hubv1.Role_ROLE_EDITOR
	case roles.Viewer:
		return hubv1.Role_ROLE_READ_ONLY
	}
	return hubv1.Role_ROLE_UNSPECIFIED
}

// storeRole stores the grant CreateUser asks for and returns the identity
// to issue: a user certificate whose role the hub stores. Without stored
// roles the certificate carries the role: fleet-wide admin or viewer only.
func (b *backend) storeRole(ctx context.Context, c caller, id pki.Identity, role hubv1.Role, namespaces []string) (pki.Identity, error) {
	g, err := grantOf(role, namespaces)
	if err != nil {
		return id, err
	}
	if b.cfg.Roles == nil {
		switch {
		case g.FleetWide() && g.Role == roles.Admin:
			id.Kind = pki.KindAdmin
		case g.FleetWide() && g.Role == roles.Viewer:
			id.Kind = pki.KindViewer
		default:
			return id, fmt.Errorf("%w: %s: this hub runs without stored roles, so only fleet-wide admin and read-only users", ErrUnimplemented, g)
		}
		return id, nil
	}
	if err := notSelf(c, id.Name); err != nil {
		return id, err
	}
	if _, err := b.cfg.Roles.Set(ctx, id.Name, g, c.id.Name); err != nil {
		return id, err
	}
	id.Kind = pki.KindUser
	return id, nil
}

// notSelf refuses to change the role of the name the caller is connected
// as: narrowing it could lock every admin out.
func notSelf(c caller, name string) error {
	if name == c.id.Name {
		return fmt.Errorf("%w: you are connected as user %q: changing your own role could lock you out; use another admin's credentials", ErrInvalid, name)
	}
	return nil
}

// SetUserRole stores a user's new role; open streams of the user follow
// it (follow).
func (s userService) SetUserRole(ctx context.Context, req *hubv1.SetUserRoleRequest) (*hubv1.SetUserRoleResponse, error) {
	c, book, err := s.b.roleBook(ctx, "UserService.SetUserRole")
	if err != nil {
		return nil, grpcStatus(err)
	}
	name := req.GetName()
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, grpcStatus(fmt.Errorf("%w: user name %q: %s", ErrInvalid, name, strings.Join(errs, "; ")))
	}
	g, err := grantOf(req.GetRole(), req.GetNamespaces())
	if err != nil {
		return nil, grpcStatus(err)
	}
	if err := notSelf(c, name); err != nil {
		return nil, grpcStatus(err)
	}
	r, err := book.Set(ctx, name, g, c.id.Name)
	if err != nil {
		return nil, grpcStatus(err)
	}
	return &hubv1.SetUserRoleResponse{User: userRoleView(r)}, nil
}

// ListUserRoles returns the stored roles, by name.
func (s userService) ListUserRoles(ctx context.Context, _ *hubv1.ListUserRolesRequest) (*hubv1.ListUserRolesResponse, error) {
	_, book, err := s.b.roleBook(ctx, "UserService.ListUserRoles")
	if err != nil {
		return nil, grpcStatus(err)
	}
	all, err := book.All(ctx)
	if err != nil {
		return nil, grpcStatus(err)
	}
	resp := &hubv1.ListUserRolesResponse{}
	for _, r := range all {
		resp.Users = append(resp.Users, userRoleView(r))
	}
	return resp, nil
}

// roleBook authorizes a call of method and returns the caller and the
// stored roles, or ErrUnimplemented when the hub runs without them.
func (b *backend) roleBook(ctx context.Context, method string) (caller, *roles.Book, error) {
	c, err := b.authorize(ctx)
	if err != nil {
		return c, nil, err
	}
	if b.cfg.Roles == nil {
		return c, nil, fmt.Errorf("%w: %s is not served: this hub runs without stored roles", ErrUnimplemented, method)
	}
	return c, b.cfg.Roles, nil
}

func userRoleView(r roles.Record) *hubv1.UserRole {
	return &hubv1.UserRole{Name: r.Name, Role: roleOf(r.Role), Namespaces: r.Namespaces, SetTime: timestamppb.New(r.At), SetBy: r.By}
}
