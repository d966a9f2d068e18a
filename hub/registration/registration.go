package registration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/hub/clusters"
	"github.com/tetherproj/tether/hub/store"
)

// retryInterval is how soon a record that could not be written is tried
// again, so that a store hiccup does not wait for the next lease change.
const retryInterval = 2 * time.Second

// Leases is what the registrar reads of hub/clusters.
type Leases interface {
	List() ([]clusters.Lease, uint64)
	Wait(ctx context.Context, after uint64) (uint64, error)
}

// Registrar creates the Cluster record of every cluster that heartbeats.
type Registrar struct {
	store  *store.Store
	leases Leases
	log    hclog.Logger
	// known holds the clusters whose record exists; only Run's goroutine
	// touches it.
	known map[string]bool
}

// New returns a registrar over st and leases.
func New(st *store.Store, leases Leases, logger hclog.Logger) *Registrar {
	return &Registrar{store: st, leases: leases, log: logger.Named("registration"), known: map[string]bool{}}
}

// Run creates records as clusters appear until ctx ends, then returns nil.
func (r *Registrar) Run(ctx context.Context) error {
	var rev uint64
	for {
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if err := r.sync(ctx); err != nil {
			wctx, cancel = context.WithTimeout(ctx, retryInterval)
		}
		next, err := r.leases.Wait(wctx, rev)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			rev = next
		}
	}
}

// sync creates the records of leased clusters not known yet; it returns
// the last error, after trying every cluster.
func (r *Registrar) sync(ctx context.Context) error {
	leases, _ := r.leases.List()
	var last error
	for _, l := range leases {
		if r.known[l.Cluster] {
			continue
		}
		created, err := r.create(ctx, l)
		if err != nil {
			r.log.Warn("cluster record not written, retrying", "cluster", l.Cluster, "error", err)
			last = err
			continue
		}
		r.known[l.Cluster] = true
		if created {
			r.log.Info("cluster registered", "cluster", l.Cluster)
		}
	}
	return last
}

// create writes the record of l's cluster unless one exists.
func (r *Registrar) create(ctx context.Context, l clusters.Lease) (bool, error) {
	data, err := json.Marshal(Record(l))
	if err != nil {
		return false, err
	}
	_, err = r.store.Create(ctx, store.ClusterKey(l.Cluster), data)
	if errors.Is(err, store.ErrExists) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("register cluster %s: %w", l.Cluster, err)
	}
	return true, nil
}

// Record is the Cluster first stored for a lease: its name, and the
// topology and Kubernetes version of its first heartbeat.
func Record(l clusters.Lease) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1alpha1.GroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              l.Cluster,
			CreationTimestamp: metav1.NewTime(l.LastHeartbeat.UTC().Truncate(time.Second)),
		},
	}
	hb := l.Heartbeat
	if topo := hb.GetTopology(); topo != nil {
		c.Spec.Provider, c.Spec.Region, c.Spec.Zones = topo.GetProvider(), topo.GetRegion(), topo.GetZones()
	}
	c.Status.KubernetesVersion = hb.GetKubernetesVersion()
	return c
}
