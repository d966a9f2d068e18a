package chartstest

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tetherproj/tether/deploy"
)

// TestChartsMatchPlainManifests: the charts' defaults run the binaries with
// the flags, mounts, security context and (the agent's own) RBAC rules of
// the plain manifests, deploy/hub/hub.yaml and `tetherctl join -o manifest`.
func TestChartsMatchPlainManifests(t *testing.T) {
	a := deploy.Agent{Cluster: cluster, Hub: "hub.example.com:7443", Token: "abcdef.0123456789abcdef",
		CAHash: testCAHash, Image: deploy.ImageRepository + ":v0.0.0-test"}
	plain, err := deploy.RenderAgent(a)
	if err != nil {
		t.Fatal(err)
	}
	values, err := deploy.HelmValues(a)
	if err != nil {
		t.Fatal(err)
	}
	chart := render(t, "tether-agent", values)
	plainObjs := decode(t, plain)
	compareContainer(t, "agent", container(t, find(t, plainObjs, "Deployment")), container(t, find(t, chart, "Deployment")))
	plainRules, _, _ := unstructured.NestedSlice(find(t, plainObjs, "ClusterRole").Object, "rules")
	chartRules, _, _ := unstructured.NestedSlice(find(t, chart, "ClusterRole").Object, "rules")
	own := plainRules[1:] // after * on *: what the agent needs for itself
	if len(chartRules) < len(own) || !reflect.DeepEqual(chartRules[len(chartRules)-len(own):], own) {
		t.Errorf("chart ClusterRole rules end with %v; want the plain manifest's own rules %v", chartRules, own)
	}

	hub := render(t, "tether-hub", "tlsSANs: [tether-hub.example.com]\n")
	compareContainer(t, "hub", container(t, find(t, decode(t, deploy.HubManifest()), "StatefulSet")), container(t, find(t, hub, "StatefulSet")))
}

// compareContainer: every argument of the plain container is in the chart's,
// and probes, mounts and the security context are equal.
func compareContainer(t *testing.T, what string, plain, chart map[string]any) {
	t.Helper()
	chartArgs := map[any]bool{}
	for _, a := range chart["args"].([]any) {
		chartArgs[a] = true
	}
	for _, a := range plain["args"].([]any) {
		if !chartArgs[a] {
			t.Errorf("%s: the plain manifest passes %v; the chart does not (%v)", what, a, chart["args"])
		}
	}
	for _, k := range []string{"readinessProbe", "livenessProbe", "volumeMounts", "securityContext", "resources", "env"} {
		if !reflect.DeepEqual(plain[k], chart[k]) {
			t.Errorf("%s %s: plain %v, chart %v", what, k, plain[k], chart[k])
		}
	}
}

func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if m != nil {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	t.Fatalf("no %s among %d objects", kind, len(objs))
	return nil
}

func container(t *testing.T, o *unstructured.Unstructured) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("%s: containers %v; want one", o.GetKind(), cs)
	}
	return cs[0].(map[string]any)
}

// TestHubChartMemoryLimit: the hub chart passes --memory-limit from
// memoryLimit (1800Mi under the default 2Gi container limit), and none
// when it is empty.
func TestHubChartMemoryLimit(t *testing.T) {
	for values, want := range map[string]string{
		"":                      "--memory-limit=1800Mi",
		"memoryLimit: 3600Mi\n": "--memory-limit=3600Mi",
		"memoryLimit: \"\"\n":   "",
	} {
		var got string
		for _, a := range container(t, find(t, render(t, "tether-hub", values), "StatefulSet"))["args"].([]any) {
			if s := a.(string); strings.HasPrefix(s, "--memory-limit") {
				got = s
			}
		}
		if got != want {
			t.Errorf("hub chart with values %q: %q; want %q", values, got, want)
		}
	}
}

// TestAgentChartInterpreterValues: the agent chart passes its interpreter
// values as the agent's flags: the Lua bounds always, the webhook policy
// when set.
func TestAgentChartInterpreterValues(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want, not    []string
	}{
		{"defaults", "", []string{"--lua-memory-fraction=0.125", "--lua-concurrency=2"},
			[]string{"--refuse-interpreter-webhooks", "--interpreter-webhook-hosts"}},
		{"bounds", "interpreter: {luaMemoryFraction: 0.25, luaConcurrency: 4}\n", []string{"--lua-memory-fraction=0.25", "--lua-concurrency=4"}, nil},
		{"refuse", "interpreter: {webhooks: {refuse: true}}\n", []string{"--refuse-interpreter-webhooks"}, []string{"--interpreter-webhook-hosts"}},
		{"hosts", "interpreter: {webhooks: {hosts: [hooks.example.com, '*.svc']}}\n",
			[]string{"--interpreter-webhook-hosts=hooks.example.com,*.svc"}, []string{"--refuse-interpreter-webhooks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]bool{}
			for _, a := range container(t, find(t, render(t, "tether-agent", agentValues(t, "h:7443", testCAHash, tc.values)), "Deployment"))["args"].([]any) {
				args[a.(string)] = true
			}
			for _, w := range tc.want {
				if !args[w] {
					t.Errorf("agent chart with %q: args %v; want %s", tc.values, args, w)
				}
			}
			for _, n := range tc.not {
				for a := range args {
					if strings.HasPrefix(a, n) {
						t.Errorf("agent chart with %q: arg %s; want no %s", tc.values, a, n)
					}
				}
			}
		})
	}
}

// TestAgentChartMemberProxy: memberProxy.mode becomes --member-proxy, and
// the agent is granted impersonation of users and groups (nothing else)
// only when the proxy is on.
func TestAgentChartMemberProxy(t *testing.T) {
	for _, tc := range []struct {
		name, values, arg string
		impersonates      bool
	}{
		{"default off", "", "--member-proxy=off", false},
		{"read-only", "memberProxy: {mode: read-only}\n", "--member-proxy=read-only", true},
		{"full", "memberProxy: {mode: full}\n", "--member-proxy=full", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, "tether-agent", agentValues(t, "h:7443", testCAHash, tc.values))
			args := container(t, find(t, objs, "Deployment"))["args"].([]any)
			if !slices.Contains(args, any(tc.arg)) {
				t.Errorf("agent chart with %q: args %v; want %s", tc.values, args, tc.arg)
			}
			rules, _, _ := unstructured.NestedSlice(find(t, objs, "ClusterRole").Object, "rules")
			var impersonate []any
			for _, r := range rules {
				if verbs := r.(map[string]any)["verbs"].([]any); slices.Contains(verbs, any("impersonate")) {
					impersonate = append(impersonate, r)
				}
			}
			want := []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"users", "groups"}, "verbs": []any{"impersonate"}}}
			if !tc.impersonates {
				want = nil
			}
			if !reflect.DeepEqual(impersonate, want) {
				t.Errorf("agent chart with %q: impersonation rules %v; want %v", tc.values, impersonate, want)
			}
		})
	}
}
