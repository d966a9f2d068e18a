package ctl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherproj/tether/test/manifests"
)

// webManifests is a Deployment and the policy that propagates it.
var webManifests = manifests.WebDeployment(3) + "---\n" + manifests.WebPolicy(`clusterAffinity:
  labelSelector:
    matchLabels: {env: prod}`)

// writeManifest writes body to a file in dir and returns its path.
func writeManifest(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApply(t *testing.T) {
	h := startOnlineHub(t)
	dir := t.TempDir()
	web := writeManifest(t, dir, "web.yaml", webManifests)

	for _, tc := range []struct {
		name string
		args []string
		in   string
		want string
	}{
		{"dry run", []string{"apply", "-f", web, "--dry-run"}, "",
			"deployment/web created (dry run)\npropagationpolicy/web created (dry run)\n"},
		{"create", []string{"apply", "-f", web}, "", "deployment/web created\npropagationpolicy/web created\n"},
		{"again", []string{"apply", "-f", web}, "", "deployment/web unchanged\npropagationpolicy/web unchanged\n"},
		{"stdin", []string{"apply", "-f", "-"}, strings.Replace(webManifests, "replicas: 3", "replicas: 5", 1),
			"deployment/web configured\npropagationpolicy/web unchanged\n"},
		{"directory", []string{"apply", "-f", dir}, "", "deployment/web configured\npropagationpolicy/web unchanged\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runWith(t, h.admin, tc.in, tc.args...)
			if code != 0 || out != tc.want {
				t.Errorf("tetherctl %v = %d, %q (stderr %q); want 0, %q", tc.args, code, out, errOut, tc.want)
			}
		})
	}
}

func TestApplyRefusals(t *testing.T) {
	h := startOnlineHub(t)
	dir := t.TempDir()
	web := writeManifest(t, dir, "web.yaml", webManifests)
	bad := writeManifest(t, dir, "bad.yaml", webManifests+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n")
	for _, tc := range []struct {
		name       string
		conf       string
		args       []string
		wantErr    string
		wantStdout string
	}{
		{"viewer", h.viewer, []string{"apply", "-f", web}, `permission denied for user "victor"`, ""},
		{"one rejected, nothing stored", h.admin, []string{"apply", "-f", bad}, "1 of 3 objects rejected; nothing was stored", "deployment/web created (not stored)\n"},
		{"no -f", h.admin, []string{"apply"}, `required flag(s) "filename" not set`, ""},
		{"missing file", h.admin, []string{"apply", "-f", filepath.Join(dir, "nope.yaml")}, "no such file", ""},
		{"empty directory", h.admin, []string{"apply", "-f", t.TempDir()}, "no .yaml, .yml or .json files", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runWith(t, tc.conf, "", tc.args...)
			if code != 1 || !strings.Contains(errOut, tc.wantErr) || (tc.wantStdout != "" && !strings.Contains(out, tc.wantStdout)) {
				t.Errorf("tetherctl %v = %d, stdout %q, stderr %q; want 1, %q on stderr", tc.args, code, out, errOut, tc.wantErr)
			}
		})
	}
	// Nothing of the rejected apply was stored.
	if code, _, errOut := runWith(t, h.admin, "", "get", "deployment", "web"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("get deployment web after a rejected apply = %d, %q; want not found", code, errOut)
	}
}

// TestApplyWrongOrder: a file holding a Deployment before its Namespace
// and a custom resource before its CRD applies as it is, each object
// reported in the file's order.
func TestApplyWrongOrder(t *testing.T) {
	h := startOnlineHub(t)
	f := writeManifest(t, t.TempDir(), "shop.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}}
---
apiVersion: example.com/v1
kind: Gadget
metadata: {name: cog}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec: {group: example.com, scope: Cluster, names: {kind: Gadget, plural: gadgets}, versions: [{name: v1, served: true, storage: true}]}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
`)
	want := "deployment/web created\ngadget/cog created\ncustomresourcedefinition/gadgets.example.com created\nnamespace/shop created\n"
	if code, out, errOut := runWith(t, h.admin, "", "apply", "-f", f); code != 0 || out != want {
		t.Errorf("tetherctl apply -f shop.yaml = %d, %q (stderr %q); want 0, %q", code, out, errOut, want)
	}
}
