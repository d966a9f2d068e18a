package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// decodeAll decodes every document of a multi-document YAML stream into
// unstructured objects, failing on a document that is not an object.
func decodeAll(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, doc)
		}
		if string(js) == "null" { // only comments
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, doc)
		}
		out = append(out, u)
	}
	return out
}

// byKind indexes objects by kind; a kind twice fails the test.
func byKind(t *testing.T, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if _, dup := out[o.GetKind()]; dup {
			t.Fatalf("two %s objects", o.GetKind())
		}
		out[o.GetKind()] = o
	}
	return out
}

func str(t *testing.T, o *unstructured.Unstructured, path ...string) string {
	t.Helper()
	v, _, err := unstructured.NestedString(o.Object, path...)
	if err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), strings.Join(path, "."), err)
	}
	return v
}

var testAgent = Agent{Cluster: "edge-1", Hub: "hub.example.com:7443", Token: "abcdef.0123456789abcdef",
	CAHash: "sha256:" + strings.Repeat("ab", 32), Image: ImageRepository + ":v1.2.3"}

func TestRenderAgent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		volume  string
		wantPVC bool
	}{
		{"default is a claim", "", true},
		{"pvc", DataVolumePVC, true},
		{"emptydir", DataVolumeEmptyDir, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := testAgent
			a.DataVolume = tc.volume
			data, err := RenderAgent(a)
			if err != nil {
				t.Fatal(err)
			}
			objs := byKind(t, decodeAll(t, data))
			wantKinds := []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Secret", "Deployment"}
			if tc.wantPVC {
				wantKinds = append(wantKinds, "PersistentVolumeClaim")
			}
			if len(objs) != len(wantKinds) {
				t.Errorf("RenderAgent(%s) has %d objects; want %v", tc.name, len(objs), wantKinds)
			}
			for _, k := range wantKinds {
				o, ok := objs[k]
				if !ok {
					t.Fatalf("RenderAgent(%s) has no %s", tc.name, k)
				}
				if k != "Namespace" && k != "ClusterRole" && k != "ClusterRoleBinding" && o.GetNamespace() != "tether-system" {
					t.Errorf("%s namespace = %q; want tether-system", k, o.GetNamespace())
				}
			}
			checkAgentObjects(t, objs, tc.wantPVC)
		})
	}
}

func checkAgentObjects(t *testing.T, objs map[string]*unstructured.Unstructured, wantPVC bool) {
	t.Helper()
	if got := str(t, objs["Secret"], "stringData", "token"); got != testAgent.Token {
		t.Errorf("Secret token = %q; want %q", got, testAgent.Token)
	}
	rules, _, _ := unstructured.NestedSlice(objs["ClusterRole"].Object, "rules")
	if len(rules) == 0 || !strings.Contains(strings.Join(toStrings(rules[0].(map[string]any)["resources"]), ","), "*") {
		t.Errorf("ClusterRole rules = %v; want * on * first", rules)
	}
	sub, _, _ := unstructured.NestedSlice(objs["ClusterRoleBinding"].Object, "subjects")
	if len(sub) != 1 || sub[0].(map[string]any)["name"] != "tether-agent" || str(t, objs["ClusterRoleBinding"], "roleRef", "name") != "tether-agent" {
		t.Errorf("ClusterRoleBinding = %v; want tether-agent bound to tether-agent", objs["ClusterRoleBinding"].Object)
	}
	d := objs["Deployment"]
	if r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); r != 1 {
		t.Errorf("Deployment replicas = %d; want 1", r)
	}
	if got := str(t, d, "spec", "template", "spec", "serviceAccountName"); got != "tether-agent" {
		t.Errorf("serviceAccountName = %q", got)
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("containers = %v; want one", containers)
	}
	c := containers[0].(map[string]any)
	if c["image"] != testAgent.Image {
		t.Errorf("image = %v; want %s", c["image"], testAgent.Image)
	}
	args := strings.Join(toStrings(c["args"]), " ")
	for _, want := range []string{"--hub=" + testAgent.Hub, "--token=$(TETHER_TOKEN)", "--ca-hash=" + testAgent.CAHash,
		"--cluster=" + testAgent.Cluster, "--data-dir=/var/lib/tether-agent"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q; want %q", args, want)
		}
	}
	if strings.Contains(args, "--kubeconfig") {
		t.Errorf("args %q; want the in-cluster configuration (no --kubeconfig)", args)
	}
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	var v map[string]any
	for _, x := range vols {
		if m := x.(map[string]any); m["name"] == "data" {
			v = m
		}
	}
	if _, pvc := v["persistentVolumeClaim"]; pvc != wantPVC {
		t.Errorf("data volume = %v; want a claim: %v", v, wantPVC)
	}
	if _, empty := v["emptyDir"]; empty == wantPVC {
		t.Errorf("data volume = %v; want an emptyDir: %v", v, !wantPVC)
	}
	if root, _, _ := unstructured.NestedBool(d.Object, "spec", "template", "spec", "securityContext", "runAsNonRoot"); !root {
		t.Error("the agent pod may run as root; want runAsNonRoot")
	}
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		out = append(out, x.(string))
	}
	return out
}

func TestRenderAgentQuotesValues(t *testing.T) {
	a := testAgent
	a.Token = "a\"b: c\n- d" // hostile: must stay one string
	data, err := RenderAgent(a)
	if err != nil {
		t.Fatal(err)
	}
	objs := byKind(t, decodeAll(t, data))
	if got := str(t, objs["Secret"], "stringData", "token"); got != a.Token {
		t.Errorf("token = %q; want %q", got, a.Token)
	}
}

func TestRenderAgentRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Agent)
		want string
	}{
		{"bad name", func(a *Agent) { a.Cluster = "Edge_1" }, "DNS subdomain"},
		{"no token", func(a *Agent) { a.Token = "" }, "required"},
		{"bad volume", func(a *Agent) { a.DataVolume = "hostpath" }, "want pvc or emptydir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := testAgent
			tc.edit(&a)
			if _, err := RenderAgent(a); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RenderAgent(%s) = %v; want %q", tc.name, err, tc.want)
			}
		})
	}
}

func TestHubManifest(t *testing.T) {
	objs := decodeAll(t, HubManifest())
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	if kinds["Namespace"] != 1 || kinds["ServiceAccount"] != 1 || kinds["Service"] != 2 || kinds["StatefulSet"] != 1 {
		t.Fatalf("hub.yaml kinds = %v; want a Namespace, a ServiceAccount, two Services, a StatefulSet", kinds)
	}
	var sts *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "StatefulSet" {
			sts = o
		}
	}
	claims, _, _ := unstructured.NestedSlice(sts.Object, "spec", "volumeClaimTemplates")
	if len(claims) != 1 {
		t.Fatalf("volumeClaimTemplates = %v; want one for --data-dir", claims)
	}
	containers, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
	args := strings.Join(toStrings(c["args"]), " ")
	if !strings.Contains(args, "--data-dir=/var/lib/tether") || !strings.Contains(args, "--listen=0.0.0.0:7443") {
		t.Errorf("hub args %q; want --data-dir and --listen", args)
	}
	mounts := c["volumeMounts"].([]any)
	if m := mounts[0].(map[string]any); m["mountPath"] != "/var/lib/tether" || m["name"] != claims[0].(map[string]any)["metadata"].(map[string]any)["name"] {
		t.Errorf("volume mount = %v; want the claim at /var/lib/tether", m)
	}
	if str(t, sts, "spec", "serviceName") != "tether-hubs" {
		t.Errorf("serviceName = %q", str(t, sts, "spec", "serviceName"))
	}
}

// TestFilesOnDisk: the embedded hub manifest is the one in the tree.
func TestFilesOnDisk(t *testing.T) {
	hub, err := os.ReadFile(filepath.Join("hub", "hub.yaml"))
	if err != nil || !bytes.Equal(hub, HubManifest()) {
		t.Errorf("hub/hub.yaml differs from HubManifest (%v)", err)
	}
}

func TestHelmValues(t *testing.T) {
	a := testAgent
	a.Image = "registry.local:5000/tether/agent:v1.2.3"
	a.DataVolume = DataVolumeEmptyDir
	values, err := HelmValues(a)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Cluster, Hub, CAHash string
		BootstrapToken       struct{ Value string }
		Image                struct{ Repository, Tag string }
		Persistence          struct{ Type string }
	}
	if err := yaml.Unmarshal([]byte(values), &got); err != nil {
		t.Fatalf("values do not decode: %v\n%s", err, values)
	}
	if got.Cluster != a.Cluster || got.Hub != a.Hub || got.CAHash != a.CAHash || got.BootstrapToken.Value != a.Token ||
		got.Image.Repository != "registry.local:5000/tether/agent" || got.Image.Tag != "v1.2.3" || got.Persistence.Type != "emptyDir" {
		t.Errorf("values = %+v; want the agent's fields, the image split at its tag, emptyDir\n%s", got, values)
	}
	cmd, err := HelmInstall(a, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cmd, "helm upgrade --install tether-agent deploy/charts/tether-agent --namespace tether-system --create-namespace --values - <<'EOF'\n") ||
		!strings.HasSuffix(cmd, values+"EOF\n") {
		t.Errorf("HelmInstall = %q", cmd)
	}
	for _, bad := range []func(*Agent){
		func(a *Agent) { a.Image = "r/agent@sha256:" + strings.Repeat("0", 64) },
		func(a *Agent) { a.Token = "" },
	} {
		b := testAgent
		bad(&b)
		if _, err := HelmValues(b); err == nil {
			t.Errorf("HelmValues(%+v) = nil error; want a refusal", b)
		}
	}
}

func TestSplitImage(t *testing.T) {
	for in, want := range map[string][2]string{
		"ghcr.io/t/agent:v1": {"ghcr.io/t/agent", "v1"},
		"host:5000/agent":    {"host:5000/agent", ""},
		"host:5000/agent:v2": {"host:5000/agent", "v2"},
		"agent":              {"agent", ""},
	} {
		if r, tag := splitImage(in); r != want[0] || tag != want[1] {
			t.Errorf("splitImage(%q) = %q, %q; want %q, %q", in, r, tag, want[0], want[1])
		}
	}
}
