package ctl_test

import (
	"strings"
	"testing"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
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
}

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
