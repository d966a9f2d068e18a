package clientapi

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
)

const localDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec: {replicas: %d, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}}
`

func localBackend(t testing.TB) (*backend, *store.Store) {
	t.Helper()
	st := etcdtest.Embedded(t)
	srv, err := New(Config{}, st, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return srv.Objects.b, st
}

func applyOutcomes(t *testing.T, b *backend, manifests string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := b.apply(ctx, &hubv1.ApplyRequest{Manifests: []byte(manifests)}, fleetAdmin)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	var out []string
	for _, r := range resp.GetResults() {
		out = append(out, strings.TrimPrefix(r.GetOutcome().String(), "APPLY_OUTCOME_"))
	}
	return fmt.Sprintf("committed=%v %s", resp.GetCommitted(), strings.Join(out, ","))
}

// TestApplyNoQuorumRead: an Apply that writes one object makes one local
// read and its conditional write, no quorum read. A quorum read waits for
// etcd's read index, behind every write-ahead log fsync in progress: on a
// busy hub it doubled Apply's latency (issue 16). Objects left as they are
// cost one quorum round for all of them. Every Apply reads all its objects
// in one request: an Apply of 100 templates made 100 local reads before,
// one after the other (issue 16's million works spent 15 s in each such
// Apply on a busy hub).
func TestApplyNoQuorumRead(t *testing.T) {
	b, st := localBackend(t)
	policy := "---\napiVersion: policy.tether.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web, namespace: default}\n" +
		"spec: {resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}], placement: {clusterAffinity: {clusterNames: [m1]}}}\n"
	var many strings.Builder
	for i := range 100 {
		fmt.Fprintf(&many, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, namespace: default}\ndata: {k: v}\n", i)
	}
	steps := []struct {
		name, manifests, want string
		requests              store.Requests
	}{
		// A template or PropagationPolicy that changes costs a second
		// local read: the FederatedResourceQuotas (quotasMayApply).
		{"create", fmt.Sprintf(localDeployment, 1), "committed=true CREATED", store.Requests{LocalReads: 2, Writes: 1}},
		{"configure", fmt.Sprintf(localDeployment, 2), "committed=true CONFIGURED", store.Requests{LocalReads: 2, Writes: 1}},
		{"unchanged", fmt.Sprintf(localDeployment, 2), "committed=true UNCHANGED", store.Requests{QuorumReads: 1, LocalReads: 1}},
		{"unchanged and created", fmt.Sprintf(localDeployment, 2) + policy, "committed=true UNCHANGED,CREATED", store.Requests{QuorumReads: 1, LocalReads: 2, Writes: 1}},
		{"100 created", many.String(), "committed=true " + strings.Repeat("CREATED,", 99) + "CREATED", store.Requests{QuorumReads: 1, LocalReads: 2, Writes: 100}},
	}
	for _, s := range steps {
		before := st.Requests()
		got := applyOutcomes(t, b, s.manifests)
		after := st.Requests()
		requests := store.Requests{QuorumReads: after.QuorumReads - before.QuorumReads, LocalReads: after.LocalReads - before.LocalReads, Writes: after.Writes - before.Writes}
		if got != s.want || requests != s.requests {
			t.Errorf("%s: Apply = %s with %+v; want %s with %+v", s.name, got, requests, s.want, s.requests)
		}
	}
}

// TestApplyStaleLocalRead: a local read that missed the latest version
// (as a lagging etcd member serves it) never decides what is stored: the
// conditional write or the check of what was read refuses it, and Apply
// plans again from quorum reads.
func TestApplyStaleLocalRead(t *testing.T) {
	b, st := localBackend(t)
	ctx := context.Background()
	key := store.ObjectKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"})
	var stale *store.KV // what the local read returns; nil: absent
	b.getLocal = func(context.Context, []string) (map[string]store.KV, error) {
		if stale == nil {
			return nil, nil
		}
		return map[string]store.KV{key: *stale}, nil
	}
	if got := applyOutcomes(t, b, fmt.Sprintf(localDeployment, 1)); got != "committed=true CREATED" {
		t.Fatalf("first Apply = %s; want committed=true CREATED", got)
	}
	// The stale read says absent: the create is refused, the quorum read finds replicas 1.
	if got := applyOutcomes(t, b, fmt.Sprintf(localDeployment, 2)); got != "committed=true CONFIGURED" {
		t.Errorf("Apply over a stale absent = %s; want committed=true CONFIGURED", got)
	}
	kv, err := st.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kv.Value), `"replicas":2`) || !strings.Contains(string(kv.Value), `"generation":2`) {
		t.Errorf("stored %s; want replicas 2 at generation 2", kv.Value)
	}
	// The stale read says replicas 2, as applied again: the check of what
	// was read fails, and the quorum read finds replicas 3 to change back.
	old := kv
	stale = &old
	if _, err := st.Update(ctx, key, []byte(strings.Replace(string(kv.Value), `"replicas":2`, `"replicas":3`, 1)), kv.Revision); err != nil {
		t.Fatal(err)
	}
	if got := applyOutcomes(t, b, fmt.Sprintf(localDeployment, 2)); got != "committed=true CONFIGURED" {
		t.Errorf("Apply over a stale same content = %s; want committed=true CONFIGURED", got)
	}
	if kv, err = st.Get(ctx, key); err != nil || !strings.Contains(string(kv.Value), `"replicas":2`) {
		t.Errorf("stored %s (%v); want replicas 2", kv.Value, err)
	}
}

// TestApplyKeepsWritesWhenOneLoses: when a write loses to another writer,
// the writes made before it stay (nothing is undone behind the report's
// back), the writes after it are not made, and the response says which
// object is which: the Namespace written, the ConfigMap FAILED with why,
// the Deployment that needs both SKIPPED. The other writer's object is left
// as it wrote it.
func TestApplyKeepsWritesWhenOneLoses(t *testing.T) {
	be, st := localBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: x}\n" +
		"spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}}\n" +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: x}\ndata: {k: v}\n" +
		"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"
	docs, err := parseManifests([]byte(in), be.cfg.MaxManifestBytes)
	if err != nil {
		t.Fatal(err)
	}
	items, err := be.prepare(ctx, docs, "default", false)
	if err != nil {
		t.Fatal(err)
	}
	plans, err := be.plan(ctx, items, time.Now(), st.GetAll)
	if err != nil {
		t.Fatal(err)
	}
	theirs := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"x"}}`
	const cfgKey = "/tether/objects/core/ConfigMap/x/cfg"
	if _, err := st.Create(ctx, cfgKey, []byte(theirs)); err != nil {
		t.Fatal(err)
	}
	rev, complete, err := be.commit(ctx, plans)
	if err != nil || complete {
		t.Fatalf("commit after another writer created the ConfigMap = %d, %v, %v; want a partial commit", rev, complete, err)
	}
	resp := response(items, plans, storedIf(complete), rev)
	var got []string
	for _, r := range resp.GetResults() {
		got = append(got, fmt.Sprintf("%s %s rev>0=%v", r.GetRef().GetKind(), strings.TrimPrefix(r.GetOutcome().String(), "APPLY_OUTCOME_"), r.GetRevision() > 0))
	}
	want := "Deployment SKIPPED rev>0=false, ConfigMap FAILED rev>0=false, Namespace CREATED rev>0=true"
	if strings.Join(got, ", ") != want || resp.GetCommitted() || !resp.GetPartial() {
		t.Errorf("response committed=%v partial=%v results %s; want committed=false partial=true %s", resp.GetCommitted(), resp.GetPartial(), strings.Join(got, ", "), want)
	}
	if msg := resp.GetResults()[1].GetMessage(); !strings.Contains(msg, "configmap x/cfg not written") || !strings.Contains(msg, "changed while this request was applied") {
		t.Errorf("FAILED message = %q; want it to name the object and why", msg)
	}
	if msg := resp.GetResults()[0].GetMessage(); !strings.Contains(msg, "a write before it failed") {
		t.Errorf("SKIPPED message = %q; want it to say why", msg)
	}
	stored := map[string]string{}
	for _, prefix := range []string{"/tether/objects/core/", "/tether/objects/apps/"} {
		kvs, _, err := st.List(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range kvs {
			stored[kv.Key] = string(kv.Value)
		}
	}
	if _, ok := stored["/tether/objects/core/Namespace/_/x"]; !ok || len(stored) != 2 || stored[cfgKey] != theirs {
		t.Errorf("stored after the partial commit: %v; want the Namespace kept and the other writer's ConfigMap", stored)
	}
}
