package ctl_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/cmd/tetherctl/ctl"
)

// Karmada v1.18.2's samples/nginx and samples/guestbook, with Tether's
// policy group and cluster names m1 and m2.
const (
	nginxDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  labels:
    app: nginx
spec:
  replicas: 2
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - image: nginx
        name: nginx
`
	nginxPropagation = `apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
  placement:
    clusterAffinity:
      clusterNames:
        - m1
        - m2
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
          - targetCluster:
              clusterNames:
                - m1
            weight: 1
          - targetCluster:
              clusterNames:
                - m2
            weight: 1
`
	nginxOverride = `apiVersion: policy.tether.io/v1alpha1
kind: OverridePolicy
metadata:
  name: example
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
  overrideRules:
    - targetCluster:
        clusterNames:
          - m1
      overriders:
        labelsOverrider:
          - operator: add
            value:
              env: skoala-dev
`
	guestbookCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: guestbooks.webapp.my.domain
spec:
  group: webapp.my.domain
  names:
    kind: Guestbook
    listKind: GuestbookList
    plural: guestbooks
    singular: guestbook
    shortNames: [gb]
  scope: Namespaced
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
    served: true
    storage: true
`
	guestbookSample = `apiVersion: webapp.my.domain/v1
kind: Guestbook
metadata:
  name: guestbook-sample
spec:
  size: 2
  configMapName: test
  alias: Probe
`
)

// TestApplyRepeatedFilename applies Karmada's nginx sample as a new user
// would, one -f per file: every file's objects are applied, in one request.
func TestApplyRepeatedFilename(t *testing.T) {
	h := startOnlineHub(t)
	dir := t.TempDir()
	files := []string{writeManifest(t, dir, "deployment.yaml", nginxDeployment),
		writeManifest(t, dir, "propagationpolicy.yaml", nginxPropagation),
		writeManifest(t, dir, "overridepolicy.yaml", nginxOverride)}
	out := mustRun(t, h.admin, "apply", "-f", files[0], "-f", files[1], "-f", files[2])
	want := "deployment/nginx created\npropagationpolicy/nginx-propagation created\noverridepolicy/example created\n"
	if out != want {
		t.Errorf("apply -f ×3 = %q; want %q", out, want)
	}
	for _, ref := range [][]string{{"deployment", "nginx"}, {"pp", "nginx-propagation"}, {"op", "example"}} {
		mustRun(t, h.viewer, "get", ref[0], ref[1])
	}
	// A file and standard input together; stdin named twice is refused.
	code, out, errOut := runWith(t, h.admin, nginxDeployment, "apply", "-f", files[1], "-f", "-")
	if code != 0 || out != "propagationpolicy/nginx-propagation unchanged\ndeployment/nginx unchanged\n" {
		t.Errorf("apply -f FILE -f - = %d, %q (stderr %q); want both unchanged", code, out, errOut)
	}
	if code, _, errOut := runWith(t, h.admin, nginxDeployment, "apply", "-f", "-", "-f", "-"); code != 1 || !strings.Contains(errOut, "standard input named 2 times") {
		t.Errorf("apply -f - -f - = %d, %q; want refused", code, errOut)
	}
	// delete -f takes every file too.
	out = mustRun(t, h.admin, "delete", "-f", files[2], "-f", files[1])
	if out != "overridepolicy/example deleted\npropagationpolicy/nginx-propagation deleted\n" {
		t.Errorf("delete -f ×2 = %q; want both deleted", out)
	}
	// A command reading one file refuses a second -f rather than dropping it.
	code, _, errOut = runWith(t, h.admin, "", "placement", "simulate", "-f", files[0], "-f", files[1])
	if code != 1 || !strings.Contains(errOut, "-f given twice") {
		t.Errorf("placement simulate -f ×2 = %d, %q; want refused", code, errOut)
	}
}

// TestKindsFromStoredCRDs names a custom resource by the names its CRD,
// stored on the hub as a template, gives it, and a kind only an agent
// reports by its plural; a name two CRDs share is refused with both.
func TestKindsFromStoredCRDs(t *testing.T) {
	h := startOnlineHub(t)
	h.putClusters(t)
	h.leases.Heartbeat("m2", &agentv1.Heartbeat{ApiEnablements: []*agentv1.APIEnablement{{GroupVersion: "stable.example.com/v1",
		Resources: []*agentv1.APIResource{{Name: "crontabs", Kind: "CronTab"}}}}})
	for _, m := range []string{guestbookCRD, guestbookSample, widgetCRD("a.example.com"), widgetCRD("b.example.com")} {
		if code, _, errOut := runWith(t, h.admin, m, "apply", "-f", "-"); code != 0 {
			t.Fatalf("apply: %s", errOut)
		}
	}
	out := mustRun(t, h.viewer, "placement", "guestbook/guestbook-sample")
	if !strings.Contains(out, "Policy:") {
		t.Errorf("placement guestbook/guestbook-sample =\n%s\nwant the placement", out)
	}
	for _, kind := range []string{"guestbooks", "guestbook", "gb", "guestbooks.webapp.my.domain", "Guestbook.v1.webapp.my.domain"} {
		if out := mustRun(t, h.viewer, "get", kind); !strings.Contains(out, "guestbook-sample") {
			t.Errorf("get %s =\n%s\nwant guestbook-sample", kind, out)
		}
	}
	if out := mustRun(t, h.viewer, "describe", "gb", "guestbook-sample"); !strings.Contains(out, "Kind:         Guestbook (webapp.my.domain/v1)") {
		t.Errorf("describe gb guestbook-sample =\n%s\nwant the Guestbook", out)
	}
	if code, _, errOut := runWith(t, h.viewer, "", "get", "crontabs"); code != 0 || !strings.Contains(errOut, "No crontabs found") {
		t.Errorf("get crontabs (reported by m2's agent) = %d, %q; want none found", code, errOut)
	}
	code, _, errOut := runWith(t, h.viewer, "", "get", "widgets")
	if code != 1 || !strings.Contains(errOut, `kind "widgets" is ambiguous: it names Widget.v1.a.example.com, Widget.v1.b.example.com`) {
		t.Errorf("get widgets = %d, %q; want ambiguous with both candidates", code, errOut)
	}
	mustRun(t, h.viewer, "get", "widgets.a.example.com")

	// A cluster-scoped CRD's objects are named without a namespace, by any
	// of its names and at any version it serves.
	for _, m := range []string{tenantCRD, "apiVersion: corp.example.com/v1\nkind: Tenant\nmetadata: {name: acme}\n"} {
		if code, _, errOut := runWith(t, h.admin, m, "apply", "-f", "-"); code != 0 {
			t.Fatalf("apply: %s", errOut)
		}
	}
	for _, args := range [][]string{{"get", "tenant", "acme", "-n", "other"}, {"get", "Tenant.v1beta1.corp.example.com", "acme"}, {"describe", "tenants", "acme"}} {
		if out := mustRun(t, h.viewer, args...); !strings.Contains(out, "acme") {
			t.Errorf("tetherctl %v =\n%s\nwant acme", args, out)
		}
	}
}

// tenantCRD defines a cluster-scoped Tenant served at v1 and v1beta1.
const tenantCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tenants.corp.example.com
spec:
  group: corp.example.com
  names: {kind: Tenant, plural: tenants, singular: tenant}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// widgetCRD defines a namespaced Widget in group.
func widgetCRD(group string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.` + group + `
spec:
  group: ` + group + `
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
}

// TestOutputPrinters prints with kubectl's -o name, jsonpath and
// custom-columns.
func TestOutputPrinters(t *testing.T) {
	h := webHub(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"}, "3"},
		{[]string{"get", "deployments", "-o", "jsonpath={.items[*].metadata.name}"}, "web"},
		{[]string{"get", "deploy", "-o", "name"}, "deployment.apps/web\n"},
		{[]string{"get", "pp", "-o", "name"}, "propagationpolicy.policy.tether.io/web\n"},
		{[]string{"get", "deploy", "-o", "custom-columns=NAME:.metadata.name,REPLICAS:spec.replicas,IMAGE:{.spec.template.spec.containers[*].image},NOPE:.spec.nope"},
			"NAME REPLICAS IMAGE NOPE\nweb 3 nginx:1.27 <none>\n"},
		{[]string{"get", "clusters", "-o", "name"}, "cluster.cluster.tether.io/m1\ncluster.cluster.tether.io/m2\ncluster.cluster.tether.io/m3\n"},
		{[]string{"get", "cluster", "m3", "-o", "jsonpath={.spec.taints[0].key}"}, "dedicated"},
		{[]string{"placement", "deployment/web", "-o", "jsonpath={.clusters[*].name} {.rejected[*].name}"}, "m1 m2 m3"},
		{[]string{"get", "deploy,pp", "-o", "name"}, "deployment.apps/web\npropagationpolicy.policy.tether.io/web\n"},
		{[]string{"get", "deploy,pp", "-o", "jsonpath={.items[*].kind}"}, "Deployment PropagationPolicy"},
		{[]string{"get", "deploy,cm,pp", "-o", "custom-columns=KIND:.kind,NAME:.metadata.name"}, "KIND NAME\nDeployment web\nPropagationPolicy web\n"},
	} {
		if got := spaces.ReplaceAllString(mustRun(t, h.viewer, tc.args...), " "); got != tc.want {
			t.Errorf("tetherctl %v = %q; want %q", tc.args, got, tc.want)
		}
	}
	out := mustRun(t, h.viewer, "get", "deploy,cm,pp")
	for _, want := range []string{"NAME READY AGE\ndeployment.apps/web 2/3 ", "\n\nNAME AGE\npropagationpolicy.policy.tether.io/web "} {
		if !strings.Contains(spaces.ReplaceAllString(out, " "), want) {
			t.Errorf("get deploy,cm,pp =\n%s\nwant %q", out, want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "deploy", "-o", "jsonpath"}, `unknown output format "jsonpath" (want table, wide, json, yaml, name, jsonpath=...`},
		{[]string{"get", "deploy", "-o", "custom-columns=NAME"}, "want HEADER:PATH"},
		{[]string{"get", "deploy", "-o", "jsonpath={.items[}"}, "parse jsonpath"},
		{[]string{"get", "deploy", "-w", "-o", "name"}, "not supported"},
		{[]string{"placement", "deployment/web", "-o", "name"}, `unknown output format "name"`},
		{[]string{"get", "deploy,clusters"}, "clusters cannot be listed with other kinds"},
		{[]string{"get", "deploy,frobs"}, `unknown kind "frobs"`},
	} {
		if code, _, errOut := runWith(t, h.viewer, "", tc.args...); code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("tetherctl %v = %d, %q; want 1 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestCompletion generates cobra's shell scripts and completes kinds (the
// hub's CRDs among them) and names from the hub.
func TestCompletion(t *testing.T) {
	h := webHub(t)
	if code, _, errOut := runWith(t, h.admin, guestbookCRD, "apply", "-f", "-"); code != 0 {
		t.Fatalf("apply: %s", errOut)
	}
	for shell, want := range map[string]string{"bash": "# bash completion V2 for tetherctl", "zsh": "#compdef tetherctl", "fish": "complete -c tetherctl"} {
		if out := mustRun(t, h.viewer, "completion", shell); !strings.Contains(out, want) {
			t.Errorf("completion %s does not contain %q", shell, want)
		}
	}
	complete := func(args ...string) []string {
		t.Helper()
		var o, e bytes.Buffer
		code := ctl.Run(context.Background(), append([]string{"__complete"}, args...), strings.NewReader(""), &o, &e)
		if code != 0 {
			t.Fatalf("__complete %v = %d, %q", args, code, e.String())
		}
		return strings.Split(strings.TrimSpace(o.String()), "\n")
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"get", "--config", h.viewer, ""}, []string{"deployments", "guestbooks", "clusters", "propagationpolicies"}},
		{[]string{"get", "--config", h.viewer, "deploy", ""}, []string{"web"}},
		{[]string{"describe", "--config", h.viewer, "clusters", ""}, []string{"m1", "m2", "m3"}},
		{[]string{"placement", "--config", h.viewer, "gu"}, []string{"guestbooks/"}},
		{[]string{"placement", "--config", h.viewer, "deployments/"}, []string{"deployments/web"}},
	} {
		got := complete(tc.args...)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("__complete %v = %q; want %q among them", tc.args, got, w)
			}
		}
	}
	// Only templates have a placement.
	if got := complete("placement", "--config", h.viewer, ""); slices.Contains(got, "clusters/") || slices.Contains(got, "propagationpolicies/") {
		t.Errorf("__complete placement = %q; want no clusters/ or propagationpolicies/", got)
	}
}
