package clientapi

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/membership"
)

// tokenService implements hubv1.TokenServiceServer over the hub's
// registry. Every call needs the admin role: a token registers a cluster.
type tokenService struct {
	hubv1.UnimplementedTokenServiceServer
	b *backend
}

// CreateToken issues a bootstrap token; its secret is in this answer only.
func (s tokenService) CreateToken(ctx context.Context, req *hubv1.CreateTokenRequest) (*hubv1.CreateTokenResponse, error) {
	reg, err := s.b.registry(ctx, "TokenService.CreateToken")
	if err != nil {
		return nil, grpcStatus(err)
	}
	tok, info, err := reg.CreateToken(ctx, membership.TokenOptions{
		TTL: req.GetTtl().AsDuration(), Cluster: req.GetClusterName(), Uses: int(req.GetUses()), Description: req.GetDescription(),
	})
	if err != nil {
		return nil, grpcStatus(registryError(err))
	}
	return &hubv1.CreateTokenResponse{
		Token: tok, CaHash: reg.CA().Hash(), ExpireTime: timestamppb.New(info.Expires), Info: tokenView(info),
	}, nil
}

// ListTokens lists the usable tokens, without secrets.
func (s tokenService) ListTokens(ctx context.Context, _ *hubv1.ListTokensRequest) (*hubv1.ListTokensResponse, error) {
	reg, err := s.b.registry(ctx, "TokenService.ListTokens")
	if err != nil {
		return nil, grpcStatus(err)
	}
	all, err := reg.ListTokens(ctx)
	if err != nil {
		return nil, grpcStatus(registryError(err))
	}
	resp := &hubv1.ListTokensResponse{}
	for _, t := range all {
		resp.Tokens = append(resp.Tokens, tokenView(t))
	}
	return resp, nil
}

// DeleteToken revokes a token.
func (s tokenService) DeleteToken(ctx context.Context, req *hubv1.DeleteTokenRequest) (*hubv1.DeleteTokenResponse, error) {
	reg, err := s.b.registry(ctx, "TokenService.DeleteToken")
	if err != nil {
		return nil, grpcStatus(err)
	}
	if err := reg.DeleteToken(ctx, req.GetId()); err != nil {
		return nil, grpcStatus(registryError(err))
	}
	return &hubv1.DeleteTokenResponse{}, nil
}

func tokenView(t membership.Token) *hubv1.Token {
	return &hubv1.Token{
		Id: t.ID, ClusterName: t.Cluster, UsesLeft: int32(t.UsesLeft()),
		CreateTime: timestamppb.New(t.Created), ExpireTime: timestamppb.New(t.Expires), Description: t.Description,
	}
}

// registry authorizes an admin call of method and returns the registry,
// or ErrUnimplemented when the hub runs without one.
func (b *backend) registry(ctx context.Context, method string) (*membership.Registry, error) {
	if _, err := b.authorize(ctx); err != nil {
		return nil, err
	}
	if b.cfg.Registry == nil {
		return nil, fmt.Errorf("%w: %s is not served: this hub runs without a registry of tokens and agents", ErrUnimplemented, method)
	}
	return b.cfg.Registry, nil
}

// registryError maps the registry's errors to the package's.
func registryError(err error) error {
	switch {
	case errors.Is(err, membership.ErrInvalid), errors.Is(err, membership.ErrMalformed):
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	case errors.Is(err, membership.ErrNotFound):
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	case errors.Is(err, membership.ErrNoPending):
		return fmt.Errorf("%w: %v", ErrPrecondition, err)
	case errors.Is(err, membership.ErrConflict):
		return fmt.Errorf("%w: %v", ErrConcurrent, err)
	}
	return err
}
