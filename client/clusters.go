package client

import (
	"context"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// ClusterSelector selects clusters for ListClusters.
type ClusterSelector struct {
	// LabelSelector is a Kubernetes label selector over the clusters'
	// labels; empty for all.
	LabelSelector string
	// WithObjects fills each cluster's ObjectJson, the record as a Cluster
	// object (large: it lists the APIs the cluster serves).
	WithObjects bool
}

// ListClusters returns the member clusters sel selects, with their state.
func (c *Client) ListClusters(ctx context.Context, sel ClusterSelector) ([]*hubv1.Cluster, error) {
	resp, err := c.Clusters.ListClusters(ctx, &hubv1.ListClustersRequest{LabelSelector: sel.LabelSelector, WithObjects: sel.WithObjects})
	return resp.GetClusters(), c.Explain(err)
}

// GetCluster returns one cluster and the APIs its agent reports it
// serving; the error's code is NotFound when no cluster has that name.
func (c *Client) GetCluster(ctx context.Context, name string) (*hubv1.GetClusterResponse, error) {
	resp, err := c.Clusters.GetCluster(ctx, &hubv1.GetClusterRequest{Name: name})
	return resp, c.Explain(err)
}

// Cordon marks a cluster unschedulable: the scheduler places nothing new
// there; what runs there stays.
func (c *Client) Cordon(ctx context.Context, name string) (*hubv1.Cluster, error) {
	resp, err := c.Clusters.Cordon(ctx, &hubv1.CordonRequest{Name: name})
	return resp.GetCluster(), c.Explain(err)
}

// Uncordon makes a cordoned cluster schedulable again.
func (c *Client) Uncordon(ctx context.Context, name string) (*hubv1.Cluster, error) {
	resp, err := c.Clusters.Uncordon(ctx, &hubv1.UncordonRequest{Name: name})
	return resp.GetCluster(), c.Explain(err)
}

// Taint adds the taints add to a cluster (replacing one of the same key
// and effect) and removes those matching remove.
func (c *Client) Taint(ctx context.Context, name string, add, remove []*hubv1.Taint) (*hubv1.Cluster, error) {
	resp, err := c.Clusters.Taint(ctx, &hubv1.TaintRequest{Name: name, Add: add, Remove: remove})
	return resp.GetCluster(), c.Explain(err)
}

// RemoveCluster unregisters a cluster: its certificate is revoked and its
// agent disconnected.
func (c *Client) RemoveCluster(ctx context.Context, name string) error {
	_, err := c.Clusters.Remove(ctx, &hubv1.RemoveRequest{Name: name})
	return c.Explain(err)
}

// Approve lets the pending key with fingerprint (sha256:HEX) take over a
// registered cluster name; FailedPrecondition when no such key is pending.
func (c *Client) Approve(ctx context.Context, name, fingerprint string) (*hubv1.Cluster, error) {
	resp, err := c.Clusters.Approve(ctx, &hubv1.ApproveRequest{Name: name, KeyFingerprint: fingerprint})
	return resp.GetCluster(), c.Explain(err)
}

// RejectKey discards a cluster's pending key with fingerprint.
func (c *Client) RejectKey(ctx context.Context, name, fingerprint string) error {
	_, err := c.Clusters.RejectKey(ctx, &hubv1.RejectKeyRequest{Name: name, KeyFingerprint: fingerprint})
	return c.Explain(err)
}

// MetaChange is a change of a cluster's labels or annotations.
type MetaChange struct {
	// Set maps keys to their new values.
	Set map[string]string
	// Remove lists keys to remove.
	Remove []string
	// Overwrite allows changing an existing key to another value.
	Overwrite bool
	// ResourceVersion makes the change only if the cluster is still at
	// this revision (FailedPrecondition otherwise); 0 for any.
	ResourceVersion int64
}

// Label changes a cluster's labels.
func (c *Client) Label(ctx context.Context, name string, m MetaChange) (*hubv1.Cluster, error) {
	resp, err := c.Clusters.Label(ctx, &hubv1.LabelRequest{Name: name, Set: m.Set, Remove: m.Remove,
		Overwrite: m.Overwrite, ResourceVersion: m.ResourceVersion})
	return resp.GetCluster(), c.Explain(err)
}

// Annotate changes a cluster's annotations.
func (c *Client) Annotate(ctx context.Context, name string, m MetaChange) (*hubv1.Cluster, error) {
	resp, err := c.Clusters.Annotate(ctx, &hubv1.AnnotateRequest{Name: name, Set: m.Set, Remove: m.Remove,
		Overwrite: m.Overwrite, ResourceVersion: m.ResourceVersion})
	return resp.GetCluster(), c.Explain(err)
}

// SetResourceModels replaces a cluster's resource models (its grades of
// node size), only if the cluster is still at resourceVersion when that
// is not 0; no models removes them.
func (c *Client) SetResourceModels(ctx context.Context, name string, models []*hubv1.ResourceModel, resourceVersion int64) (*hubv1.Cluster, error) {
	resp, err := c.Clusters.SetResourceModels(ctx, &hubv1.SetResourceModelsRequest{Name: name, Models: models, ResourceVersion: resourceVersion})
	return resp.GetCluster(), c.Explain(err)
}
