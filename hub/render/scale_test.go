package render

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/store"
)

func clusterNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("member-%03d", i)
	}
	return out
}

// regionOf puts half the clusters in eu, half in us.
func regionOf(i int) string {
	if i%2 == 0 {
		return "eu"
	}
	return "us"
}

func dupBinding(name string, clusters []string) *workv1alpha1.ResourceBinding {
	b := binding(duplicated(), 6)
	b.Name = name + "-deployment"
	for _, c := range clusters {
		b.Spec.Clusters = append(b.Spec.Clusters, target(c, 6))
	}
	return b
}

// TestSharedContent proves the content addressing: one template
// duplicated to 100 clusters without overrides is one rendered work.
func TestSharedContent(t *testing.T) {
	e := newEnv(t)
	names := clusterNames(100)
	for i, c := range names {
		e.putCluster(cluster(c, regionOf(i)))
	}
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, dupBinding("web", names))
	e.start()
	e.settle()

	var first *agentv1.WorkUpsert
	for _, c := range names {
		works, _ := e.current(c)
		w := works[webKey]
		if first == nil {
			first = w
		}
		if w != first {
			t.Fatalf("Current(%s) holds its own copy of %s; want the shared one", c, webKey)
		}
	}
	st := e.r.Stats()
	t.Logf("1 template × 100 clusters: %+v", st)
	if st.Contents != 1 || st.Works != 100 {
		t.Errorf("Stats = %d contents, %d works; want 1 content shared by 100 works", st.Contents, st.Works)
	}

	// An override for eu splits it in two contents, never in 100.
	e.putOverride(regionRegistry("eu"))
	e.waitFor("the eu override", func() bool { return e.r.Stats().Contents == 2 })
}

// putAll stores kvs with a few writers at once (etcd batches their fsyncs).
func (e *env) putAll(kvs map[string][]byte) {
	e.t.Helper()
	const writers = 16
	keys := make(chan string)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				if _, err := e.st.Put(e.ctx, k, kvs[k]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for k := range kvs {
		keys <- k
	}
	close(keys)
	wg.Wait()
	close(errs)
	for err := range errs {
		e.t.Fatalf("put: %v", err)
	}
}

// TestScaleKeysAndContents stores 1,000 Deployments duplicated to 100
// clusters, half of them overridden by region, and checks that etcd holds
// templates + bindings + clusters + policies keys (not × clusters) and the
// renderer one content per distinct rendered work.
func TestScaleKeysAndContents(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 2,100 keys")
	}
	const templates, nClusters = 1000, 100
	e := newEnv(t)
	names := clusterNames(nClusters)
	kvs := map[string][]byte{}
	for i, c := range names {
		kvs[store.ClusterKey(c)] = toJSON(t, cluster(c, regionOf(i)))
	}
	for i := range templates {
		tmpl := named(t, fmt.Sprintf("app-%04d", i))
		kvs[store.ObjectKey(templateRef(tmpl))] = toJSON(t, tmpl.Object)
		kvs[store.BindingKey(templateRef(tmpl))] = toJSON(t, dupBinding(tmpl.GetName(), names))
	}
	op := regionRegistry("eu")
	kvs[overrideKey(op)] = toJSON(t, op)
	start := time.Now()
	e.putAll(kvs)
	t.Logf("stored %d keys in %v", len(kvs), time.Since(start).Round(time.Millisecond))

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start = time.Now()
	e.start()
	if _, _, err := e.r.Current(e.ctx, names[0]); err != nil {
		t.Fatalf("Current: %v", err)
	}
	load := time.Since(start)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)

	keys, dbBytes, err := e.st.Size(e.ctx)
	if err != nil {
		t.Fatalf("Size: %v", err)
	}
	st := e.r.Stats()
	t.Logf("etcd: %d keys, %d bytes (db); renderer: %d works for %d clusters, %d contents, %d content bytes; first publication %v; heap +%d MiB",
		keys, dbBytes, st.Works, st.Clusters, st.Contents, st.ContentBytes, load.Round(time.Millisecond),
		(int64(after.HeapAlloc)-int64(before.HeapAlloc))>>20)
	if want := int64(2*templates + nClusters + 1); keys != want {
		t.Errorf("etcd keys = %d; want templates + bindings + clusters + policies = %d", keys, want)
	}
	if st.Works != templates*nClusters || st.Contents != 2*templates {
		t.Errorf("Stats = %d works, %d contents; want %d works sharing %d contents (one per template and region)",
			st.Works, st.Contents, templates*nClusters, 2*templates)
	}
	changeOneAtScale(t, e, names)
}

// changeOneAtScale changes one template and checks that each cluster gets
// exactly that key, and how long it takes.
func changeOneAtScale(t *testing.T, e *env, names []string) {
	revs := map[string]int64{}
	for _, c := range names {
		_, revs[c] = e.current(c)
	}
	start := time.Now()
	u := named(t, "app-0007")
	u.SetLabels(map[string]string{"app": "web", "v": "2"})
	e.putTemplate(u)
	for _, c := range names {
		ch, _ := e.changes(c, revs[c])
		if len(ch) != 1 || ch[0].Key != "apps/Deployment/default/app-0007" {
			t.Fatalf("Changes(%s) = %v; want exactly app-0007", c, keysOf(ch))
		}
	}
	t.Logf("one template change reached %d clusters in %v", len(names), time.Since(start).Round(time.Microsecond))
}

func BenchmarkRenderDeployment(b *testing.B) {
	in := work.Input{
		Template:  object(b, deploymentYAML),
		Binding:   binding(divided(), 6, target("eu-1", 2), target("us-1", 4)),
		Cluster:   cluster("eu-1", "eu"),
		Overrides: []policyv1alpha1.OverridePolicy{regionRegistry("eu", "us")},
	}
	interp := testInterpreter(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := work.Render(ctx, in, interp); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "works/s")
}

// BenchmarkRenderFanOut100Clusters renders one template for 100 clusters in
// two regions with a per-region override: "shared" is the renderer's path
// (one render per distinct input, then publication), "each" renders every
// cluster on its own.
func BenchmarkRenderFanOut100Clusters(b *testing.B) {
	names := clusterNames(100)
	r := New(nil, testInterpreter(b), Config{}, hclog.NewNullLogger())
	r.in = newInputs()
	tmpl := object(b, deploymentYAML)
	r.in.templates[webKey] = tmpl
	r.in.bindings[webKey] = dupBinding("web", names)
	op := regionRegistry("eu", "us")
	r.in.ops["default"] = map[string]*policyv1alpha1.OverridePolicy{op.Name: &op}
	for i, c := range names {
		r.in.clusters[c] = cluster(c, regionOf(i))
	}
	ctx := context.Background()
	b.Run("shared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p := r.planKey(ctx, webKey, nil)
			r.state.commit([]*plan{p}, nil, time.Now())
		}
		b.ReportMetric(float64(b.N*len(names))/b.Elapsed().Seconds(), "works/s")
	})
	b.Run("each", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			renderEach(b, ctx, tmpl, r.in.bindings[webKey], r.in.clusters, names, op)
		}
		b.ReportMetric(float64(b.N*len(names))/b.Elapsed().Seconds(), "works/s")
	})
}

func renderEach(b *testing.B, ctx context.Context, tmpl *unstructured.Unstructured, bnd *workv1alpha1.ResourceBinding,
	clusters map[string]*clusterv1alpha1.Cluster, names []string, op policyv1alpha1.OverridePolicy) {
	for _, c := range names {
		in := work.Input{Template: tmpl, Binding: bnd, Cluster: clusters[c], Overrides: []policyv1alpha1.OverridePolicy{op}}
		if _, err := work.Render(ctx, in, testInterpreter(b)); err != nil {
			b.Fatal(err)
		}
	}
}
