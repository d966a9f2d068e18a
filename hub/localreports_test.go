package hub_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
)

// TestSingleHubHoldsReportsInMemory: a hub on its embedded etcd is the
// only replica, so what edge-1's agent acks and reports is aggregated
// from memory, with no relayed record per work in etcd (a million works
// would be a million keys). Restarted, the hub holds nothing: it asks the
// reconnecting agent for both statuses, and the binding keeps its items
// meanwhile.
func TestSingleHubHoldsReportsInMemory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*replicaTimeout)
	defer cancel()
	cfg := hubConfigWithEmbeddedEtcd(t)
	r, stop := startStoppable(t, cfg)
	cert := r.registerAgent(t, ctx, reportsCluster)
	sctx, stopStream := context.WithCancel(ctx)
	agent := r.openAgent(t, sctx, cert, &agentv1.Hello{AgentVersion: "test"})
	agent.send(t, &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: readyHeartbeat()}})
	r.apply(t, ctx, reportsManifests)
	answered := agent.answerWorks(cfgAKey, cfgBKey)
	for _, name := range []string{"cfg-a", "cfg-b"} {
		r.waitHealthyItem(t, ctx, name)
	}
	stopStream()
	versions := <-answered
	stop()

	st, err := store.Open(ctx, store.Config{DataDir: cfg.DataDir}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("open the stopped hub's etcd: %v", err)
	}
	n, err := st.Count(ctx, store.ReportsPrefix)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("a single hub wrote %d relayed records for 2 works; want none (it is the only replica: memory holds them)", n)
	}

	restarted, _ := startStoppable(t, cfg)
	hello := &agentv1.Hello{AgentVersion: "test", LastHubIdentity: agent.identity, HeldWorks: []*agentv1.HeldWork{
		{WorkKey: cfgAKey, Version: versions[cfgAKey]}, {WorkKey: cfgBKey, Version: versions[cfgBKey]}},
		ReportedStatuses: []*agentv1.ReportedStatus{
			{WorkKey: cfgAKey, Version: versions[cfgAKey], StatusDigest: "digest-" + cfgAKey},
			{WorkKey: cfgBKey, Version: versions[cfgBKey], StatusDigest: "digest-" + cfgBKey}}}
	got := restarted.openAgent(t, ctx, cert, hello).awaitStatusRequest(t)
	slices.Sort(got)
	if want := []string{cfgAKey, cfgBKey}; !slices.Equal(got, want) {
		t.Errorf("the restarted hub asks the reconnecting agent for the statuses of %v; want %v (it holds none)", got, want)
	}
	for _, name := range []string{"cfg-a", "cfg-b"} {
		restarted.waitHealthyItem(t, ctx, name)
	}
}

// startStoppable starts a hub with cfg and waits until it serves; stop
// stops it (it is also stopped when the test ends).
func startStoppable(t *testing.T, cfg hub.Config) (r *replica, stop func()) {
	t.Helper()
	h, err := hub.New(cfg, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("hub.New: %v", err)
	}
	r, stop = startHub(t, h, cfg.DataDir)
	r.serving(t)
	return r, stop
}

// waitHealthyItem waits until the binding of ConfigMap default/name,
// read through r's client API, has edge-1's item applied, Healthy and
// with the status the agent reported.
func (r *replica) waitHealthyItem(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	adminTLS, err := r.adminConf(t).TLS()
	if err != nil {
		t.Fatal(err)
	}
	objects := hubv1.NewObjectServiceClient(dial(t, r.addr, adminTLS))
	ref := &hubv1.ObjectRef{ApiVersion: workv1alpha1.GroupVersion.String(), Kind: workv1alpha1.KindResourceBinding,
		Namespace: "default", Name: bind.BindingName("ConfigMap", name)}
	want := `{"observed":"core/ConfigMap/default/` + name + `"}`
	var last []configv1alpha1.AggregatedStatusItem
	deadline := time.Now().Add(replicaTimeout / 3)
	for time.Now().Before(deadline) {
		if resp, err := objects.Get(ctx, &hubv1.GetRequest{Ref: ref}); err == nil {
			var b workv1alpha1.ResourceBinding
			if err := json.Unmarshal(resp.GetObject().GetObjectJson(), &b); err != nil {
				t.Fatalf("decode binding %s: %v", ref.GetName(), err)
			}
			last = b.Status.AggregatedStatus
			for _, it := range last {
				if it.ClusterName == reportsCluster && it.Applied && it.Health == configv1alpha1.ResourceHealthy &&
					it.Status != nil && string(it.Status.Raw) == want {
					return
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	data, _ := json.Marshal(last)
	t.Fatalf("binding %s: aggregated status %s; want %s applied, Healthy, status %s", ref.GetName(), data, reportsCluster, want)
}
