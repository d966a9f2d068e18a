package e2e

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/kit"
)

// fixture is one hub and one agent per member cluster, shared by the
// ordered subtests of TestE2E.
type fixture struct {
	t       *testing.T // the parent test: it owns every process
	env     *kit.Env
	dataDir string // the hub's --data-dir
	hub     *hubProc
	admin   *admin
	agents  []*agentProc // in the order of env.Clusters
}

// newFixture starts n member clusters, a hub on a free port and an agent
// per cluster, and waits until the hub holds a Ready lease for each.
func newFixture(t *testing.T, n int) *fixture {
	t.Helper()
	env := kit.StartT(t, kit.Options{Clusters: kit.Members(n)})
	f := &fixture{t: t, env: env, dataDir: t.TempDir()}
	f.hub = startHub(t, t, f.dataDir, "127.0.0.1:0")
	f.admin = dialAdmin(t, f.hub)
	for _, c := range env.Clusters {
		a := newAgent(t, t, f.hub, c)
		a.start(t)
		f.agents = append(f.agents, a)
	}
	f.hub.waitMetric(t, memberWait, `tether_hub_clusters{state="Ready"}`, float64(n))
	return f
}

// TestE2E runs the agent's "Done when" against real processes, one step
// after the other on one hub and two clusters: each step starts from the
// state the one before left, so a failed step ends the test.
func TestE2E(t *testing.T) {
	f := newFixture(t, 2)
	steps := []struct {
		name string
		run  func(*testing.T, *fixture)
	}{
		{"DeploymentWeightsOverridesDriftRetain", testDeployment},
		{"CloneSetThroughBuiltInCustomization", testCloneSet},
		{"HubOutageAndAgentRestart", testHubOutage},
		{"HubWithWipedStore", testWipedStore},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, f) }) {
			t.Fatalf("step %s failed; the later steps need its state", s.name)
		}
	}
}

// waitTemplateStatus polls the hub until the template's aggregated
// .status.<field> is want.
func waitTemplateStatus(t testing.TB, a *admin, r *hubv1.ObjectRef, field string, want int64) {
	t.Helper()
	poll(t, memberWait, fmt.Sprintf("hub: %s %s status.%s = %d", r.GetKind(), r.GetName(), field, want), func() (bool, string) {
		u, err := a.get(context.Background(), r)
		if err != nil {
			return false, err.Error()
		}
		status, _, _ := unstructured.NestedMap(u.Object, "status")
		got, found, _ := unstructured.NestedInt64(u.Object, "status", field)
		return found && got == want, fmt.Sprint(status)
	})
}
