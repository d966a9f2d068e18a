package membership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/store"
)

// retryInterval is how soon a record that could not be written is tried
// again, so that a store hiccup does not wait for the next lease change.
const retryInterval = 2 * time.Second

// createParallel is how many records the registrar creates at once: etcd
// commits concurrent writes together (one raft round and one fsync for
// many), where one at a time a fleet of 10,000 connecting at once waited
// 10,000 round trips for its records, and the scheduler for them.
const createParallel = 32

// records is what the registrar reads and writes of the store
// (*store.Store).
type records interface {
	Create(ctx context.Context, key string, value []byte) (int64, error)
	Get(ctx context.Context, key string) (store.KV, error)
	Update(ctx context.Context, key string, value []byte, rev int64) (int64, error)
}

// TaintCordoned is the key of the NoSchedule taint that cordons a cluster
// (the client API's Cordon): new placements avoid it, what runs there
// stays. A new record carries it when the hub makes new clusters start
// cordoned.
const TaintCordoned = "node.tether.io/cordoned"

// Leases is what the registrar reads of hub/liveness.
type Leases interface {
	List() ([]lease.Lease, uint64)
	Wait(ctx context.Context, after uint64) (uint64, error)
}

// Registrar creates the Cluster record of every cluster that heartbeats.
type Registrar struct {
	store  records
	leases Leases
	log    hclog.Logger
	// known holds the clusters whose record exists; apis, the JSON of the
	// API enablements last written (or found) in each record. Only Run's
	// goroutine touches them.
	known map[string]bool
	apis  map[string]string
	// since is when Run started: only a heartbeat received after it
	// creates a record. Leases outlive what they describe (a removed
	// cluster's lease stays, Unknown, in every replica, and a new leader's
	// leases come from liveness records up to a lease old), so a registrar
	// starting (a new leader's) must not take them for clusters it met.
	since time.Time
	// waiting: the last sync skipped a cluster not met yet, so Run looks
	// again after retryInterval (a renewal does not wake Leases.Wait).
	waiting bool
	// cordoned: new records start cordoned (NewClustersCordoned).
	cordoned bool
}

// RegistrarOption changes how a Registrar creates records.
type RegistrarOption func(*Registrar)

// NewClustersCordoned makes the records the registrar creates start
// cordoned (TaintCordoned) when on, until an admin uncordons them.
func NewClustersCordoned(on bool) RegistrarOption { return func(r *Registrar) { r.cordoned = on } }

// NewRegistrar returns a registrar over st and leases.
func NewRegistrar(st *store.Store, leases Leases, logger hclog.Logger, opts ...RegistrarOption) *Registrar {
	r := &Registrar{store: st, leases: leases, log: logger.Named("registration"), known: map[string]bool{}, apis: map[string]string{}}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Run creates records as clusters appear until ctx ends, then returns nil.
func (r *Registrar) Run(ctx context.Context) error {
	r.since = time.Now()
	var rev uint64
	for {
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if err := r.sync(ctx); err != nil || r.waiting {
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

// sync creates the records of leased clusters not known yet (createAll)
// and brings their API enablements up to date; it returns the last error,
// after trying every cluster.
func (r *Registrar) sync(ctx context.Context) error {
	leases, _ := r.leases.List()
	r.waiting = false
	var fresh []lease.Lease
	for _, l := range leases {
		switch {
		case r.known[l.Cluster]:
		case l.LastHeartbeat.After(r.since):
			fresh = append(fresh, l)
		default:
			r.waiting = r.waiting || l.State != lease.StateUnknown // not met yet: its next heartbeat registers it
		}
	}
	failed := r.createAll(ctx, fresh)
	var last error
	for _, l := range leases {
		err := failed[l.Cluster]
		if err == nil && r.known[l.Cluster] {
			err = r.refreshAPIs(ctx, l)
		}
		if err != nil {
			r.log.Warn("cluster record not written, retrying", "cluster", l.Cluster, "error", err)
			last = err
		}
	}
	return last
}

// createAll creates the records of leases, createParallel at a time, and
// marks them known; it returns why each that failed did. A record created
// here holds the lease's API enablements, which refreshAPIs then need not
// read back.
func (r *Registrar) createAll(ctx context.Context, leases []lease.Lease) map[string]error {
	type result struct {
		created bool
		err     error
	}
	results := make([]result, len(leases))
	sem := make(chan struct{}, createParallel)
	var wg sync.WaitGroup
	for i, l := range leases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i].created, results[i].err = r.create(ctx, l)
		}()
	}
	wg.Wait()
	failed := map[string]error{}
	for i, l := range leases {
		if results[i].err != nil {
			failed[l.Cluster] = results[i].err
			continue
		}
		r.known[l.Cluster] = true
		if results[i].created {
			r.log.Info("cluster registered", "cluster", l.Cluster)
			if apis := lease.APIEnablements(l.Heartbeat); len(apis) > 0 {
				if want, err := json.Marshal(apis); err == nil {
					r.apis[l.Cluster] = string(want)
				}
			}
		}
	}
	return failed
}

// refreshAPIs keeps the record's status.apiEnablements at what the
// cluster's agent last reported, writing only when they changed (a CRD
// installed or removed in the member): the scheduler reads them from the
// lease, but the client API (placement queries, Simulate) reads the
// record, and both must agree on which clusters serve a kind. A heartbeat
// without enablements (discovery failed) leaves the record as it is, as
// the scheduler then falls back to it. Only status.apiEnablements is
// touched; the rest of the record (an admin's labels and taints) is kept
// byte for byte through optimistic concurrency.
func (r *Registrar) refreshAPIs(ctx context.Context, l lease.Lease) error {
	apis := lease.APIEnablements(l.Heartbeat)
	if len(apis) == 0 {
		return nil
	}
	want, err := json.Marshal(apis)
	if err != nil {
		return err
	}
	if r.apis[l.Cluster] == string(want) {
		return nil
	}
	key := store.ClusterKey(l.Cluster)
	kv, err := r.store.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil // removed by an admin: not ours to re-create
	}
	if err != nil {
		return err
	}
	data, changed, err := withAPIs(kv.Value, want)
	if err != nil {
		return fmt.Errorf("cluster record %s: %w", key, err)
	}
	if changed {
		if _, err := r.store.Update(ctx, key, data, kv.Revision); err != nil {
			return err
		}
		r.log.Info("cluster API enablements recorded", "cluster", l.Cluster, "group_versions", len(apis))
	}
	r.apis[l.Cluster] = string(want)
	return nil
}

// withAPIs returns the Cluster record with status.apiEnablements set to
// apis (JSON), and whether that changed it.
func withAPIs(record, apis []byte) ([]byte, bool, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(record, &obj); err != nil {
		return nil, false, err
	}
	var status map[string]json.RawMessage
	if raw, ok := obj["status"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &status); err != nil {
			return nil, false, err
		}
	}
	if status == nil {
		status = map[string]json.RawMessage{}
	}
	var cur []clusterv1alpha1.APIEnablement
	if raw, ok := status["apiEnablements"]; ok {
		_ = json.Unmarshal(raw, &cur) // unreadable counts as different
	}
	if canon, err := json.Marshal(cur); err == nil && len(cur) > 0 && string(canon) == string(apis) {
		return record, false, nil
	}
	status["apiEnablements"] = apis
	rawStatus, err := json.Marshal(status)
	if err != nil {
		return nil, false, err
	}
	obj["status"] = rawStatus
	out, err := json.Marshal(obj)
	return out, true, err
}

// create writes the record of l's cluster unless one exists. Labels its
// agent reported that are not valid Kubernetes labels are left out, with a
// warning: an agent registered with a token had them checked at Register,
// and tether-agent checks its own; this is a certificate minted outside
// registration with an agent that did not.
func (r *Registrar) create(ctx context.Context, l lease.Lease) (bool, error) {
	rec := Record(l, r.cordoned)
	if err := ValidateLabels(rec.Labels); err != nil {
		r.log.Warn("cluster's reported labels left out of its new record", "cluster", l.Cluster, "error", err)
		rec.Labels = nil
	}
	data, err := json.Marshal(rec)
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

// NewRecord is a cluster's first record: its name, when it was created,
// and the topology and labels its agent reported (at registration or in a
// heartbeat); cordoned, it carries the NoSchedule taint TaintCordoned.
// Every path that creates a Cluster record builds it here.
func NewRecord(name string, created time.Time, topo *agentv1.Topology, cordoned bool) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1alpha1.GroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			CreationTimestamp: metav1.NewTime(created.UTC().Truncate(time.Second)),
			Labels:            maps.Clone(topo.GetLabels()),
		},
	}
	c.Spec.Provider, c.Spec.Region, c.Spec.Zones = topo.GetProvider(), topo.GetRegion(), topo.GetZones()
	if cordoned {
		c.Spec.Taints = []corev1.Taint{{Key: TaintCordoned, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &c.CreationTimestamp}}
	}
	return c
}

// Record is the Cluster first stored for a lease: its name, and the
// topology and Kubernetes version of its first heartbeat.
func Record(l lease.Lease, cordoned bool) *clusterv1alpha1.Cluster {
	hb := l.Heartbeat
	c := NewRecord(l.Cluster, l.LastHeartbeat, hb.GetTopology(), cordoned)
	c.Status.KubernetesVersion = hb.GetKubernetesVersion()
	if apis := lease.APIEnablements(hb); len(apis) > 0 {
		c.Status.APIEnablements = apis
	}
	return c
}

// ValidateLabels checks the labels an agent asserts for its cluster as
// Kubernetes checks labels: a qualified-name key and a label value. The
// error names the first bad label, in key order.
func ValidateLabels(labels map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %.100q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(labels[k]); len(errs) > 0 {
			return fmt.Errorf("label %.100q value %.100q: %s", k, labels[k], strings.Join(errs, "; "))
		}
	}
	return nil
}
