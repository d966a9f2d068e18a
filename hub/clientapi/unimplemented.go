package clientapi

import (
	"context"
	"fmt"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// The cluster, token and user services come with a later issue; until then
// every method checks the caller like the real one will and answers
// UNIMPLEMENTED saying so.

type clusterService struct {
	hubv1.UnimplementedClusterServiceServer
}

type tokenService struct {
	hubv1.UnimplementedTokenServiceServer
}

type userService struct {
	hubv1.UnimplementedUserServiceServer
}

// notYet is the answer of every method of the three services.
func notYet(ctx context.Context, a access, method string) error {
	if _, err := authorize(ctx, a); err != nil {
		return grpcStatus(err)
	}
	return grpcStatus(fmt.Errorf("%w: %s is not served by this hub version (cluster, token and user administration arrive with a later release)", ErrUnimplemented, method))
}

func (clusterService) ListClusters(ctx context.Context, _ *hubv1.ListClustersRequest) (*hubv1.ListClustersResponse, error) {
	return nil, notYet(ctx, read, "ClusterService.ListClusters")
}

func (clusterService) GetCluster(ctx context.Context, _ *hubv1.GetClusterRequest) (*hubv1.GetClusterResponse, error) {
	return nil, notYet(ctx, read, "ClusterService.GetCluster")
}

func (clusterService) Cordon(ctx context.Context, _ *hubv1.CordonRequest) (*hubv1.CordonResponse, error) {
	return nil, notYet(ctx, write, "ClusterService.Cordon")
}

func (clusterService) Uncordon(ctx context.Context, _ *hubv1.UncordonRequest) (*hubv1.UncordonResponse, error) {
	return nil, notYet(ctx, write, "ClusterService.Uncordon")
}

func (clusterService) Taint(ctx context.Context, _ *hubv1.TaintRequest) (*hubv1.TaintResponse, error) {
	return nil, notYet(ctx, write, "ClusterService.Taint")
}

func (clusterService) Remove(ctx context.Context, _ *hubv1.RemoveRequest) (*hubv1.RemoveResponse, error) {
	return nil, notYet(ctx, write, "ClusterService.Remove")
}

func (clusterService) Approve(ctx context.Context, _ *hubv1.ApproveRequest) (*hubv1.ApproveResponse, error) {
	return nil, notYet(ctx, write, "ClusterService.Approve")
}

func (tokenService) CreateToken(ctx context.Context, _ *hubv1.CreateTokenRequest) (*hubv1.CreateTokenResponse, error) {
	return nil, notYet(ctx, write, "TokenService.CreateToken")
}

func (tokenService) ListTokens(ctx context.Context, _ *hubv1.ListTokensRequest) (*hubv1.ListTokensResponse, error) {
	return nil, notYet(ctx, read, "TokenService.ListTokens")
}

func (tokenService) DeleteToken(ctx context.Context, _ *hubv1.DeleteTokenRequest) (*hubv1.DeleteTokenResponse, error) {
	return nil, notYet(ctx, write, "TokenService.DeleteToken")
}

func (userService) CreateUser(ctx context.Context, _ *hubv1.CreateUserRequest) (*hubv1.CreateUserResponse, error) {
	return nil, notYet(ctx, write, "UserService.CreateUser")
}
