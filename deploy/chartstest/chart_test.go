package chartstest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/deploy"
	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/kit"
	"github.com/tetherproj/tether/test/proc"
)

const (
	namespace  = "tether-system"
	release    = "tether-agent"
	cluster    = "edge-1"
	stateName  = "tether-agent-state"
	fieldOwner = "chartstest"
	testCAHash = "sha256:abababababababababababababababababababababababababababababababab"
)

// helmBin is the pinned helm: $TETHER_HELM, else the tools directory's.
func helmBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TETHER_HELM"); p != "" {
		return p
	}
	root, err := proc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, ".cache", "tools", "helm")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("helm not found at %s (run `make tools-charts`, or set $TETHER_HELM): %v", p, err)
	}
	return p
}

// render runs helm template of chart (under deploy/charts) with values
// (a YAML document) and returns its objects.
func render(t *testing.T, chart, values string) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command(helmBin(t), "template", release, filepath.Join("..", "charts", chart), "--namespace", namespace, "--values", "-")
	cmd.Stdin = strings.NewReader(values)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template %s: %v\n%s\nvalues:\n%s", chart, err, stderr.String(), values)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(out.String(), -1) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("helm template %s: a document does not decode: %v\n%s", chart, err, doc)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs
}

// apply server-side applies objs to the cluster as its admin, with dry-run
// when dryRun, failing the test on the first refusal.
func apply(ctx context.Context, t *testing.T, c *kit.Cluster, objs []*unstructured.Unstructured, dryRun bool) {
	t.Helper()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Clientset().Discovery()))
	opts := metav1.PatchOptions{FieldManager: fieldOwner, Force: new(true)}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, o.GetName(), err)
		}
		data, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		ri := c.Dynamic().Resource(m.Resource)
		var patchErr error
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			_, patchErr = ri.Namespace(o.GetNamespace()).Patch(ctx, o.GetName(), types.ApplyPatchType, data, opts)
		} else {
			_, patchErr = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, opts)
		}
		if patchErr != nil {
			t.Fatalf("apply %s %s/%s (dry-run %v): %v", gvk.Kind, o.GetNamespace(), o.GetName(), dryRun, patchErr)
		}
	}
}

func kinds(objs []*unstructured.Unstructured) map[string]int {
	out := map[string]int{}
	for _, o := range objs {
		out[o.GetKind()]++
	}
	return out
}

// agentValues are the agent chart's values as `tetherctl join -o helm`
// prints them (deploy.HelmValues), plus extra.
func agentValues(t *testing.T, hub, caHash, extra string) string {
	t.Helper()
	v, err := deploy.HelmValues(deploy.Agent{Cluster: cluster, Hub: hub, Token: "abcdef.0123456789abcdef",
		CAHash: caHash, Image: deploy.ImageRepository + ":v0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	return v + extra
}

// hubValueSets are the hub chart's main shapes.
var hubValueSets = map[string]struct {
	values string
	want   map[string]int
}{
	"one replica, embedded etcd": {"", map[string]int{"StatefulSet": 1, "Service": 3, "ServiceAccount": 1}},
	"three replicas, external etcd over TLS, CA from a Secret": {`
replicas: 3
etcd: {endpoints: [https://etcd-0.etcd:2379, https://etcd-1.etcd:2379], tls: {existingSecret: etcd-client}}
ca: {existingSecret: tether-ca}
tlsSANs: [tether.example.com]
persistence: {size: 1Gi}
extraArgs: [--failover-unreachable]
`, map[string]int{"StatefulSet": 1, "Service": 3, "ServiceAccount": 1, "PodDisruptionBudget": 1}},
	"two replicas, CA sealed in etcd": {`
replicas: 2
etcd: {endpoints: [http://etcd:2379]}
ca: {encryptionKeySecret: tether-ca-key}
service: {type: ClusterIP}
`, map[string]int{"StatefulSet": 1, "Service": 3, "ServiceAccount": 1, "PodDisruptionBudget": 1}},
}

// TestCharts starts a member cluster and a hub, dry-runs every main value
// set of both charts against the member, then goes the way a user does:
// `tetherctl join edge-1 -o helm` prints the values, the agent chart is
// installed with them for real, and tether-agent runs with exactly the
// arguments, bootstrap token and ServiceAccount the chart created. It
// registers, keeps its state in the chart's state Secret and applies a
// Deployment and a ConfigMap the hub places.
func TestCharts(t *testing.T) {
	helmBin(t) // fail early when helm is missing
	binDir, err := fleet.BinDir("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	env := kit.StartT(t, kit.Options{Clusters: []kit.ClusterSpec{{Name: cluster}}})
	member := env.Clusters[0]
	sp := proc.NewSpawner()
	t.Cleanup(sp.Close) // after the processes' own cleanups
	hubDir := t.TempDir()
	hubAddr := startHub(ctx, t, sp, binDir, hubDir)

	t.Run("dry-run", func(t *testing.T) {
		if k := kinds(render(t, "tether-hub", "metrics: {serviceMonitor: {enabled: true}}\n")); k["ServiceMonitor"] != 1 {
			t.Errorf("hub with metrics.serviceMonitor.enabled: kinds %v; want a ServiceMonitor (not applied: the kit has no Prometheus operator CRDs)", k)
		}
		ensureNamespace(ctx, t, member)
		for name, vs := range hubValueSets {
			objs := render(t, "tether-hub", vs.values)
			if got := kinds(objs); !equalCounts(got, vs.want) {
				t.Errorf("hub %s: kinds %v; want %v", name, got, vs.want)
			}
			apply(ctx, t, member, objs, true)
		}
		// rbac.clusterAdmin with an emptyDir; metrics, no NetworkPolicy, an
		// existing token Secret, cluster facts.
		for _, extra := range []string{
			"rbac: {clusterAdmin: true}\npersistence: {type: emptyDir}\n",
			"metrics: {port: 8080}\nnetworkPolicy: {enabled: false}\n" +
				"bootstrapToken: {existingSecret: my-token}\nlabels: {env: prod}\nregion: eu\nzones: [a, b]\n",
		} {
			apply(ctx, t, member, render(t, "tether-agent", agentValues(t, "h0:7443,h1:7443", testCAHash, extra)), true)
		}
	})

	// What a user runs: join -o helm, then the printed helm command (here
	// helm template and a server-side apply of its output).
	values := joinValues(t, binDir, hubDir, hubAddr)
	installed := render(t, "tether-agent", values+"stateSecret: {enabled: true, name: "+stateName+"}\n")
	if k := kinds(installed); k["ClusterRole"] != 1 || k["Role"] != 1 || k["Secret"] != 1 || k["NetworkPolicy"] != 1 || k["Deployment"] != 1 {
		t.Errorf("agent chart renders %v; want its RBAC, token Secret, NetworkPolicy and Deployment", k)
	}
	checkNetworkPolicy(t, find(t, installed, "NetworkPolicy"))
	ensureNamespace(ctx, t, member)
	apply(ctx, t, member, installed, false)
	kubeconfig, err := serviceAccountKubeconfig(ctx, member)
	if err != nil {
		t.Fatal(err)
	}
	health := startAgent(ctx, t, sp, binDir, member, find(t, installed, "Deployment"), kubeconfig)

	t.Run("agent runs with the chart's RBAC", func(t *testing.T) {
		cfg, err := clientconfig.Load(filepath.Join(hubDir, "admin.conf"))
		if err != nil {
			t.Fatal(err)
		}
		hub, err := fleet.Dial(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer hub.Close()
		wait, cancelWait := context.WithTimeout(ctx, time.Minute)
		defer cancelWait()
		if err := proc.Poll(wait, 200*time.Millisecond, func(ctx context.Context) error {
			ready, err := hub.ReadyClusters(ctx)
			if err != nil || len(ready) != 1 {
				return fmt.Errorf("ready clusters %v, %v", ready, err)
			}
			return nil
		}); err != nil {
			t.Fatalf("the agent never registered: %v", err)
		}
		if _, err := hub.Apply(ctx, []byte(workload)); err != nil {
			t.Fatal(err)
		}
		ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}
		if err := hub.WaitTemplate(wait, ref, fleet.Rolled); err != nil {
			t.Fatalf("Deployment web never rolled out through the agent: %v", err)
		}
		cs := member.Clientset()
		if err := proc.Poll(wait, 100*time.Millisecond, func(ctx context.Context) error {
			_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "web-config", metav1.GetOptions{})
			return err
		}); err != nil {
			t.Errorf("ConfigMap web-config in the member: %v", err)
		}
		if s, err := cs.CoreV1().Secrets(namespace).Get(ctx, stateName, metav1.GetOptions{}); err != nil || len(s.Data) == 0 {
			t.Errorf("state Secret %s/%s = %v; want the agent's state in it", namespace, stateName, err)
		}
		// The readiness probe passes: synced, and the account may ask the
		// member API server's /readyz.
		if err := proc.Poll(wait, 100*time.Millisecond, func(ctx context.Context) error { return probe(ctx, health+"/readyz") }); err != nil {
			t.Errorf("the agent's readiness probe: %v", err)
		}
	})

	t.Run("the RBAC grants no more than documented", func(t *testing.T) {
		checkNotAllowed(ctx, t, kubeconfig)
	})
}

// startHub starts tether-hub with its data in dir and returns its address.
func startHub(ctx context.Context, t *testing.T, sp *proc.Spawner, binDir, dir string) string {
	t.Helper()
	p, err := proc.Start(sp, proc.Config{Name: "tether-hub", Bin: filepath.Join(binDir, "tether-hub"),
		Args: []string{"--data-dir", dir, "--listen", "127.0.0.1:0"}, LogPath: filepath.Join(dir, "hub.log")})
	if err != nil {
		t.Fatal(err)
	}
	proc.StopAtEnd(t, p, 15*time.Second)
	var addr string
	if err := proc.Poll(ctx, 50*time.Millisecond, func(context.Context) error {
		if p.Exited() {
			return proc.Permanent(p.ExitError())
		}
		data, err := os.ReadFile(filepath.Join(dir, "hub.addr"))
		addr = strings.TrimSpace(string(data))
		return err
	}); err != nil {
		t.Fatalf("hub: %v", err)
	}
	return addr
}

// joinValues runs `tetherctl join edge-1 -o helm` against the hub and
// returns the values it prints, checking the command around them.
func joinValues(t *testing.T, binDir, hubDir, hubAddr string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "tetherctl"), "--config", filepath.Join(hubDir, "admin.conf"),
		"join", cluster, "-o", "helm", "--hub", hubAddr, "--image", deploy.ImageRepository+":v0.0.0-test")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tetherctl join -o helm: %v\n%s", err, stderr.String())
	}
	head, rest, _ := strings.Cut(string(out), "\n")
	if !strings.HasPrefix(head, "helm upgrade --install tether-agent deploy/charts/tether-agent ") || !strings.HasSuffix(rest, "EOF\n") {
		t.Fatalf("tetherctl join -o helm printed\n%s\nwant the helm command and its values up to EOF", out)
	}
	return strings.TrimSuffix(rest, "EOF\n")
}

// startAgent runs tether-agent as the chart's Deployment would: its args,
// the token from the Secret the chart created (as the kubelet resolves
// $(TETHER_TOKEN)), a directory for its data volume, and instead of the
// in-cluster configuration a kubeconfig with the ServiceAccount's token.
// Its probes' port moves to a free loopback one; it returns their base URL.
func startAgent(ctx context.Context, t *testing.T, sp *proc.Spawner, binDir string, c *kit.Cluster, d *unstructured.Unstructured, kubeconfig string) string {
	t.Helper()
	ctr := container(t, d)
	env := ctr["env"].([]any)[0].(map[string]any)
	ref := env["valueFrom"].(map[string]any)["secretKeyRef"].(map[string]any)
	secret, err := c.Clientset().CoreV1().Secrets(namespace).Get(ctx, ref["name"].(string), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := string(secret.Data[ref["key"].(string)])
	dataDir := t.TempDir()
	healthAddr := freeAddr(t)
	args := []string{"--kubeconfig=" + kubeconfig}
	for _, a := range ctr["args"].([]any) {
		s := strings.ReplaceAll(a.(string), "$("+env["name"].(string)+")", token)
		s = strings.Replace(s, "--data-dir=/var/lib/tether-agent", "--data-dir="+dataDir, 1)
		if strings.HasPrefix(s, "--health-addr=") {
			s = "--health-addr=" + healthAddr
		}
		args = append(args, s)
	}
	p, err := proc.Start(sp, proc.Config{Name: "tether-agent", Bin: filepath.Join(binDir, "tether-agent"), Args: args,
		LogPath: filepath.Join(dataDir, "agent.log")})
	if err != nil {
		t.Fatal(err)
	}
	proc.StopAtEnd(t, p, 15*time.Second)
	return "http://" + healthAddr
}

// freeAddr is a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// probe returns nil when url answers 200, as a kubelet's httpGet probe.
func probe(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return nil
}

// checkNetworkPolicy: no ingress at all, egress only to DNS, the API
// server's usual ports and the hub's.
func checkNetworkPolicy(t *testing.T, np *unstructured.Unstructured) {
	t.Helper()
	types, _, _ := unstructured.NestedStringSlice(np.Object, "spec", "policyTypes")
	ingress, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
	if strings.Join(types, ",") != "Ingress,Egress" || len(ingress) != 0 {
		t.Errorf("NetworkPolicy policyTypes %v, ingress %v; want both types and no ingress rule", types, ingress)
	}
	egress, _, _ := unstructured.NestedSlice(np.Object, "spec", "egress")
	var ports []string
	for _, e := range egress {
		ps, _, _ := unstructured.NestedSlice(e.(map[string]any), "ports")
		for _, p := range ps {
			m := p.(map[string]any)
			ports = append(ports, fmt.Sprintf("%v/%v", m["port"], m["protocol"]))
		}
	}
	if got, want := strings.Join(ports, " "), "53/UDP 53/TCP 443/TCP 6443/TCP 7443/TCP"; got != want {
		t.Errorf("NetworkPolicy egress ports %q; want %q", got, want)
	}
}

func ensureNamespace(ctx context.Context, t *testing.T, c *kit.Cluster) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := c.Clientset().CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// workload is a Deployment and a ConfigMap placed on the member.
const workload = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: main, image: "nginx:1.27"}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: default}
data: {greeting: hello}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: web}
    - {apiVersion: v1, kind: ConfigMap, name: web-config}
  placement: {clusterAffinity: {clusterNames: [` + cluster + `]}}
`

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// saName is the chart's ServiceAccount for release tether-agent.
const saName = release

// serviceAccountKubeconfig writes a kubeconfig for c that authenticates as
// the chart's ServiceAccount with a token from the TokenRequest API, as the
// kubelet mounts one into the agent's pod.
func serviceAccountKubeconfig(ctx context.Context, c *kit.Cluster) (string, error) {
	tr, err := c.Clientset().CoreV1().ServiceAccounts(namespace).CreateToken(ctx, saName,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of ServiceAccount %s: %w", saName, err)
	}
	admin := c.RESTConfig()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["member"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	cfg.AuthInfos["agent"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["agent"] = &clientcmdapi.Context{Cluster: "member", AuthInfo: "agent"}
	cfg.CurrentContext = "agent"
	path := filepath.Join(c.Dir, "agent-sa.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", err
	}
	return path, nil
}

// checkNotAllowed: the chart's ServiceAccount may not touch kinds outside
// rbac.resources (RBAC objects, a kind it does not list), nor read or write
// another Secret name than its state's through the Role.
func checkNotAllowed(ctx context.Context, t *testing.T, kubeconfig string) {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(rc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		attr  authzv1.ResourceAttributes
		allow bool
	}{
		{authzv1.ResourceAttributes{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, false},
		{authzv1.ResourceAttributes{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "rolebindings", Namespace: "default"}, false},
		{authzv1.ResourceAttributes{Verb: "delete", Group: "", Resource: "nodes"}, false},
		{authzv1.ResourceAttributes{Verb: "delete", Group: "", Resource: "pods", Namespace: "default"}, false},
		{authzv1.ResourceAttributes{Verb: "create", Group: "storage.k8s.io", Resource: "storageclasses"}, false},
		{authzv1.ResourceAttributes{Verb: "delete", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, false},
		{authzv1.ResourceAttributes{Verb: "create", Group: "apps", Resource: "deployments", Namespace: "default"}, true},
		{authzv1.ResourceAttributes{Verb: "update", Group: "", Resource: "secrets", Namespace: namespace, Name: stateName}, true},
	} {
		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
			&authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &tc.attr}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed != tc.allow {
			t.Errorf("%s %s/%s in %q: allowed %v; want %v", tc.attr.Verb, tc.attr.Group, tc.attr.Resource, tc.attr.Namespace, r.Status.Allowed, tc.allow)
		}
	}
}
