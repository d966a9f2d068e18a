package client

import (
	"context"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// CreateToken issues a bootstrap token for an agent to register with; the
// response carries the secret (returned only here) and the hash of the
// hub's CA that the agent pins.
func (c *Client) CreateToken(ctx context.Context, req *hubv1.CreateTokenRequest) (*hubv1.CreateTokenResponse, error) {
	resp, err := c.tokens.CreateToken(ctx, req)
	return resp, c.Explain(err)
}

// ListTokens returns the bootstrap tokens that can still be used, without
// their secrets.
func (c *Client) ListTokens(ctx context.Context) ([]*hubv1.Token, error) {
	resp, err := c.tokens.ListTokens(ctx, &hubv1.ListTokensRequest{})
	return resp.GetTokens(), c.Explain(err)
}

// DeleteToken deletes the bootstrap token with id.
func (c *Client) DeleteToken(ctx context.Context, id string) error {
	_, err := c.tokens.DeleteToken(ctx, &hubv1.DeleteTokenRequest{Id: id})
	return c.Explain(err)
}

// CreateUser issues a user's client certificate: for the CSR in the
// request, or with a key the hub generates and returns.
func (c *Client) CreateUser(ctx context.Context, req *hubv1.CreateUserRequest) (*hubv1.CreateUserResponse, error) {
	resp, err := c.users.CreateUser(ctx, req)
	return resp, c.Explain(err)
}

// SetUserRole changes what every certificate of a user name may do: role,
// in namespaces (none for the whole fleet). Open streams of the user
// follow it.
func (c *Client) SetUserRole(ctx context.Context, name string, role hubv1.Role, namespaces []string) (*hubv1.UserRole, error) {
	resp, err := c.users.SetUserRole(ctx, &hubv1.SetUserRoleRequest{Name: name, Role: role, Namespaces: namespaces})
	return resp.GetUser(), c.Explain(err)
}

// ListUserRoles returns the users' stored roles, by name.
func (c *Client) ListUserRoles(ctx context.Context) ([]*hubv1.UserRole, error) {
	resp, err := c.users.ListUserRoles(ctx, &hubv1.ListUserRolesRequest{})
	return resp.GetUsers(), c.Explain(err)
}

// RevokeUser revokes every certificate issued to the user name until then.
func (c *Client) RevokeUser(ctx context.Context, name string) (*hubv1.RevokedUser, error) {
	resp, err := c.users.RevokeUser(ctx, &hubv1.RevokeUserRequest{Name: name})
	return resp.GetRevoked(), c.Explain(err)
}

// ListRevokedUsers returns the revoked user names.
func (c *Client) ListRevokedUsers(ctx context.Context) ([]*hubv1.RevokedUser, error) {
	resp, err := c.users.ListRevokedUsers(ctx, &hubv1.ListRevokedUsersRequest{})
	return resp.GetRevoked(), c.Explain(err)
}
