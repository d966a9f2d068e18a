package fleet

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/test/proc"
)

// Client talks to the fleet's hub as its admin over mutual TLS: the hub.v1
// ObjectService and PlacementService, plus the waits tests and the demo
// need.
type Client struct {
	Objects   hubv1.ObjectServiceClient
	Placement hubv1.PlacementServiceClient
	Tokens    hubv1.TokenServiceClient
	Clusters  hubv1.ClusterServiceClient
	conn      *grpc.ClientConn
}

// Client connects to the hub with its admin.conf (the address from
// hub.addr). The caller closes it.
func (f *Fleet) Client() (*Client, error) {
	cfg, err := clientconfig.Load(f.AdminConfig)
	if err != nil {
		return nil, err
	}
	cfg.Server = f.HubAddr
	return Dial(cfg)
}

// Dial connects to the hub a client config names.
func Dial(cfg *clientconfig.Config) (*Client, error) {
	tlsCfg, err := cfg.TLS()
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(cfg.Server, grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)))
	if err != nil {
		return nil, fmt.Errorf("hub %s: %w", cfg.Server, err)
	}
	return &Client{
		Objects:   hubv1.NewObjectServiceClient(conn),
		Placement: hubv1.NewPlacementServiceClient(conn),
		Tokens:    hubv1.NewTokenServiceClient(conn),
		Clusters:  hubv1.NewClusterServiceClient(conn),
		conn:      conn,
	}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Apply applies manifests (multi-document YAML or JSON) in namespace
// "default" unless they name one. A rejected object is an error that lists
// every rejection with its field errors; nothing is stored then. A failed
// write is an error naming it and the objects skipped after it; the
// objects written before it stay.
func (c *Client) Apply(ctx context.Context, manifests []byte) (*hubv1.ApplyResponse, error) {
	resp, err := c.Objects.Apply(ctx, &hubv1.ApplyRequest{Manifests: manifests})
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	if !resp.GetCommitted() {
		var msgs []string
		for _, r := range resp.GetResults() {
			switch r.GetOutcome() {
			case hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED, hubv1.ApplyOutcome_APPLY_OUTCOME_FAILED, hubv1.ApplyOutcome_APPLY_OUTCOME_SKIPPED:
			default:
				continue
			}
			msg := fmt.Sprintf("%s: %s", RefString(r.GetRef()), r.GetMessage())
			for _, fe := range r.GetFieldErrors() {
				msg += fmt.Sprintf("; %s: %s", fe.GetField(), fe.GetDetail())
			}
			msgs = append(msgs, msg)
		}
		if resp.GetPartial() {
			return resp, fmt.Errorf("apply: partly stored, the others were written: %s", strings.Join(msgs, "\n"))
		}
		return resp, fmt.Errorf("apply: nothing stored: %s", strings.Join(msgs, "\n"))
	}
	return resp, nil
}

// Get returns a stored object with its aggregated status.
func (c *Client) Get(ctx context.Context, ref *hubv1.ObjectRef) (*unstructured.Unstructured, error) {
	resp, err := c.Objects.Get(ctx, &hubv1.GetRequest{Ref: ref})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", RefString(ref), err)
	}
	obj := &unstructured.Unstructured{} // UnmarshalJSON keeps integers int64
	if err := obj.UnmarshalJSON(resp.GetObject().GetObjectJson()); err != nil {
		return nil, fmt.Errorf("get %s: decode: %w", RefString(ref), err)
	}
	return obj, nil
}

// GetPlacement returns where a template runs.
func (c *Client) GetPlacement(ctx context.Context, ref *hubv1.ObjectRef) (*hubv1.Placement, error) {
	resp, err := c.Placement.GetPlacement(ctx, &hubv1.GetPlacementRequest{Template: ref})
	if err != nil {
		return nil, fmt.Errorf("placement of %s: %w", RefString(ref), err)
	}
	return resp.GetPlacement(), nil
}

// probeTemplate and probePolicy ask Simulate where an object selecting
// every cluster would go: the clusters the hub has registered and would
// schedule onto. Nothing is stored.
const (
	probeTemplate = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"tether-fleet-probe","namespace":"default"}}`
	probePolicy   = `{"apiVersion":"policy.tether.io/v1alpha1","kind":"PropagationPolicy",` +
		`"metadata":{"name":"tether-fleet-probe","namespace":"default"},` +
		`"spec":{"resourceSelectors":[{"apiVersion":"v1","kind":"ConfigMap","name":"tether-fleet-probe"}]}}`
)

// ReadyClusters lists the clusters whose lease is Ready and whose agent has
// reported the APIs its cluster serves (apps/v1 among them): only then does
// the scheduler, which rejects a cluster that has not listed a kind (as
// Karmada does), consider them for a workload.
func (c *Client) ReadyClusters(ctx context.Context) ([]string, error) {
	resp, err := c.Clusters.ListClusters(ctx, &hubv1.ListClustersRequest{})
	if err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	var names []string
	for _, cl := range resp.GetClusters() {
		if cl.GetState() != hubv1.ClusterState_CLUSTER_STATE_READY {
			continue
		}
		got, err := c.Clusters.GetCluster(ctx, &hubv1.GetClusterRequest{Name: cl.GetName()})
		if err != nil {
			return nil, fmt.Errorf("get cluster %s: %w", cl.GetName(), err)
		}
		if servesApps(got.GetApiEnablements()) {
			names = append(names, cl.GetName())
		}
	}
	return names, nil
}

func servesApps(gvs []*hubv1.APIGroupVersion) bool {
	for _, gv := range gvs {
		if gv.GetGroupVersion() == "apps/v1" {
			return true
		}
	}
	return false
}

// WaitTemplate polls a template until cond accepts it (with its aggregated
// status), or ctx ends; the error then says what cond last said.
func (c *Client) WaitTemplate(ctx context.Context, ref *hubv1.ObjectRef, cond func(*unstructured.Unstructured) error) error {
	err := proc.Poll(ctx, pollInterval, func(ctx context.Context) error {
		obj, err := c.Get(ctx, ref)
		if err != nil {
			return err
		}
		return cond(obj)
	})
	if err != nil {
		return fmt.Errorf("wait for %s: %w", RefString(ref), err)
	}
	return nil
}

// Rolled accepts a workload whose aggregated status has every replica of
// spec.replicas ready and available: a Divided template is rolled out. (The
// hub sums the members' statuses, so a Duplicated template over n clusters
// is rolled out at Replicas(n × spec.replicas).)
func Rolled(obj *unstructured.Unstructured) error {
	want, found, err := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if err != nil {
		return proc.Permanent(fmt.Errorf("spec.replicas: %w", err))
	}
	if !found {
		want = 1
	}
	return Replicas(want)(obj)
}

// Replicas accepts a workload whose aggregated status has n replicas, all
// ready and available.
func Replicas(n int64) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		replicas, _, _ := unstructured.NestedInt64(obj.Object, "status", "replicas")
		ready, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas")
		available, _, _ := unstructured.NestedInt64(obj.Object, "status", "availableReplicas")
		if replicas != n || ready != n || available != n {
			return fmt.Errorf("aggregated status: %d replicas, %d ready, %d available; want %d", replicas, ready, available, n)
		}
		return nil
	}
}

// RefString renders a reference as Kind namespace/name.
func RefString(r *hubv1.ObjectRef) string {
	if r.GetNamespace() == "" {
		return r.GetKind() + " " + r.GetName()
	}
	return r.GetKind() + " " + r.GetNamespace() + "/" + r.GetName()
}
