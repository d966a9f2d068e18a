package fleet

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/test/proc"
)

// dialTimeout bounds Dial's check that the hub answers.
const dialTimeout = 30 * time.Second

// Client talks to the fleet's hub as its admin over mutual TLS: the public
// client (client.Client, whose typed calls it has), plus the waits tests
// and the demo need.
type Client struct {
	*client.Client
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

// Dial connects to the hub a client config names with client.Dial, which
// checks (here within dialTimeout) that the hub answers.
func Dial(cfg *clientconfig.Config) (*Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	c, err := client.Dial(ctx, client.Config{Address: cfg.Server, User: cfg.User, CAPEM: []byte(cfg.CertificateAuthority),
		CertPEM: []byte(cfg.ClientCertificate), KeyPEM: []byte(cfg.ClientKey)})
	if err != nil {
		return nil, err
	}
	return &Client{Client: c}, nil
}

// Get returns a stored object with its aggregated status, decoded (it
// stands for client.Client.Get, which returns the object as the hub sent
// it).
func (c *Client) Get(ctx context.Context, ref *hubv1.ObjectRef) (*unstructured.Unstructured, error) {
	o, err := c.Client.Get(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", RefString(ref), err)
	}
	obj := &unstructured.Unstructured{} // UnmarshalJSON keeps integers int64
	if err := obj.UnmarshalJSON(o.GetObjectJson()); err != nil {
		return nil, fmt.Errorf("get %s: decode: %w", RefString(ref), err)
	}
	return obj, nil
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
	clusters, err := c.ListClusters(ctx, client.ClusterSelector{})
	if err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	var names []string
	for _, cl := range clusters {
		if cl.GetState() != hubv1.ClusterState_CLUSTER_STATE_READY {
			continue
		}
		got, err := c.GetCluster(ctx, cl.GetName())
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

// RefString renders a reference as Kind namespace/name (client.RefString).
func RefString(r *hubv1.ObjectRef) string { return client.RefString(r) }
