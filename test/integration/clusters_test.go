package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// edgeWebPolicy duplicates web to the clusters labelled tier=edge.
const edgeWebPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {labelSelector: {matchLabels: {tier: edge}}}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`

// TestClusterEditsMoveWorkloads: against a tether-hub process, relabelling
// clusters (ClusterService.Label, what tetherctl label cluster calls)
// moves a workload whose clusterAffinity selects on the label, its work
// reaching the newly selected cluster's agent; and resource models set on
// a cluster reach its agent's open stream as new Settings.
func TestClusterEditsMoveWorkloads(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, dir)
	a := dialAdmin(t, dir, h.addr)
	cs := hubv1.NewClusterServiceClient(a.conn)
	ctx := ctxFor(t)
	sa := connectReady(ctx, t, mintAgent(t, dir, "cluster-a"), h.addr, nil)
	defer sa.close()
	sb := connectReady(ctx, t, mintAgent(t, dir, "cluster-b"), h.addr, nil)
	defer sb.close()
	defer heartbeatEvery(sa, time.Second)()
	defer heartbeatEvery(sb, time.Second)()
	label := func(cluster, tier string) {
		t.Helper()
		poll(t, workWait, "label "+cluster, func() (bool, string) { // the record exists after the leader's first heartbeat
			_, err := cs.Label(ctx, &hubv1.LabelRequest{Name: cluster, Set: map[string]string{"tier": tier}, Overwrite: true})
			return err == nil, fmt.Sprint(err)
		})
	}
	placed := func(want ...string) {
		t.Helper()
		poll(t, workWait, fmt.Sprintf("web on %v", want), func() (bool, string) {
			p, err := a.placement(ctx, deployment("web"))
			got := placedOn(p)
			slices.Sort(got)
			return err == nil && slices.Equal(got, want), fmt.Sprintf("%v, %v", got, err)
		})
	}
	label("cluster-a", "edge")
	label("cluster-b", "core")
	a.mustApply(ctx, deploymentYAML("web", "nginx:1.27", 2)+edgeWebPolicy)
	placed("cluster-a")
	waitUpsert(t, sa, keyWeb)

	label("cluster-b", "edge")
	placed("cluster-a", "cluster-b")
	waitUpsert(t, sb, keyWeb)
	label("cluster-a", "core")
	placed("cluster-b")

	if _, err := cs.SetResourceModels(ctx, &hubv1.SetResourceModelsRequest{Name: "cluster-b", Models: []*hubv1.ResourceModel{
		{Grade: 0, Ranges: []*hubv1.ResourceModelRange{{Name: "cpu", Min: "0", Max: "4"}}},
		{Grade: 1, Ranges: []*hubv1.ResourceModelRange{{Name: "cpu", Min: "4", Max: "64"}}},
	}}); err != nil {
		t.Fatalf("SetResourceModels(cluster-b) = %v", err)
	}
	st := waitSettings(ctx, t, sb)
	if m := st.GetResourceModels(); len(m) != 2 || m[1].GetRanges()[0].GetMin() != "4" {
		t.Errorf("Settings sent to cluster-b carry models %v; want grades 0 and 1", m)
	}
}

// waitSettings returns the next Settings the hub sends on s, skipping
// other messages.
func waitSettings(ctx context.Context, t *testing.T, s *stream) *agentv1.Settings {
	t.Helper()
	timer := time.NewTimer(workWait)
	defer timer.Stop()
	for {
		select {
		case msg, ok := <-s.msgs:
			if !ok {
				t.Fatal("stream ended before Settings")
			}
			if st := msg.GetSettings(); st != nil {
				return st
			}
		case <-timer.C:
			t.Fatalf("no Settings within %s", workWait)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
}
