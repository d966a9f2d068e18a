package ctl_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tetherproj/tether/agent"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/internal/hubaddr"
)

// startTokenHub is startOnlineHub with a token registry, so that
// TokenService answers; it returns the registry too.
func startTokenHub(t *testing.T) (*onlineHub, *membership.Registry) {
	t.Helper()
	h := newOnlineHub(t)
	h.leases = liveness.New(liveness.Config{})
	reg := membership.NewRegistry(h.st, h.ca, membership.Config{}, hclog.NewNullLogger())
	h.serve(t, clientapi.Config{Leases: h.leases, Registry: reg})
	return h, reg
}

// register redeems token for cluster as an agent's Register would.
func register(t *testing.T, reg *membership.Registry, token, cluster string) error {
	t.Helper()
	csr, _, err := certs.NewCSR(cluster)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = reg.Register(ctx, membership.Request{Token: token, Cluster: cluster, CSRPEM: csr})
	return err
}

// checkSingleUse: the token registers only cluster, and only once.
func checkSingleUse(t *testing.T, reg *membership.Registry, token, cluster string) {
	t.Helper()
	if err := register(t, reg, token, "other"); !errors.Is(err, membership.ErrRefused) {
		t.Errorf("Register(other) with the join token of %s = %v; want refused", cluster, err)
	}
	if err := register(t, reg, token, cluster); err != nil {
		t.Fatalf("Register(%s) with its join token = %v; want success", cluster, err)
	}
	if err := register(t, reg, token, cluster); !errors.Is(err, membership.ErrRefused) {
		t.Errorf("Register(%s) with a used join token = %v; want refused (single use)", cluster, err)
	}
}

// agentConfigOf parses a printed tether-agent command into the agent's
// config, as its flags would.
func agentConfigOf(t *testing.T, command string) agent.Config {
	t.Helper()
	fields := strings.Fields(command)
	if len(fields) == 0 || fields[0] != "tether-agent" || len(fields)%2 != 1 {
		t.Fatalf("command %q: want tether-agent and flag/value pairs", command)
	}
	var c agent.Config
	var hub string
	targets := map[string]*string{"--hub": &hub, "--token": &c.Token, "--ca-hash": &c.CAHash,
		"--cluster": &c.ClusterName, "--kubeconfig": &c.Kubeconfig, "--data-dir": &c.DataDir}
	for i := 1; i < len(fields); i += 2 {
		p, ok := targets[fields[i]]
		if !ok {
			t.Fatalf("command %q: unknown flag %s", command, fields[i])
		}
		*p = fields[i+1]
	}
	c.HubAddrs = hubaddr.Split(hub)
	return c
}

func TestJoinCommand(t *testing.T) {
	h, reg := startTokenHub(t)
	code, out, errOut := runWith(t, h.admin, "", "join", "edge-1", "--ttl", "30m")
	if code != 0 {
		t.Fatalf("join edge-1 = %d, %q", code, errOut)
	}
	line := regexp.MustCompile(`(?m)^\s+(tether-agent .*)$`).FindStringSubmatch(out)
	if line == nil {
		t.Fatalf("join edge-1 =\n%s\nwant a tether-agent command line", out)
	}
	c := agentConfigOf(t, line[1])
	if err := c.Validate(); err != nil {
		t.Errorf("the printed command %q does not validate: %v", line[1], err)
	}
	got := [6]string{strings.Join(c.HubAddrs, ","), c.Token, c.CAHash, c.ClusterName, c.Kubeconfig, c.DataDir}
	want := [6]string{h.addr, c.Token, h.ca.Hash(), "edge-1", "~/.kube/config", "/var/lib/tether-agent"}
	if c.Token == "" || got != want {
		t.Errorf("command %q = %q; want %q", line[1], got, want)
	}
	if !strings.Contains(errOut, "loopback") {
		t.Errorf("join with a 127.0.0.1 hub: stderr %q; want a loopback warning", errOut)
	}
	for _, w := range []string{"single use, expires", "-o manifest | kubectl apply -f -"} {
		if !strings.Contains(out, w) {
			t.Errorf("join edge-1 =\n%s\nwant %q", out, w)
		}
	}
	// The token exists, bound to edge-1, one use.
	var list []struct {
		Cluster  string `json:"cluster"`
		UsesLeft int    `json:"usesLeft"`
		Expires  string `json:"expires"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, h.admin, "token", "list", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Cluster != "edge-1" || list[0].UsesLeft != 1 {
		t.Errorf("token list after join = %+v; want one edge-1 token with 1 use", list)
	} else if exp, _ := time.Parse(time.RFC3339, list[0].Expires); time.Until(exp) > 31*time.Minute {
		t.Errorf("token expires %s; want within --ttl 30m", list[0].Expires)
	}
	checkSingleUse(t, reg, c.Token, "edge-1")

	// -o json: the same, machine-readable.
	var j struct{ Cluster, Hub, Token, CAHash, Command string }
	if err := json.Unmarshal([]byte(mustRun(t, h.admin, "join", "edge-2", "-o", "json", "--hub", "hub.example.com:443")), &j); err != nil {
		t.Fatal(err)
	}
	if j.Cluster != "edge-2" || j.Hub != "hub.example.com:443" || j.CAHash != h.ca.Hash() || !strings.Contains(j.Command, "--token "+j.Token) {
		t.Errorf("join -o json = %+v; want edge-2 at hub.example.com:443 with its token in the command", j)
	}

	// The replicas of one hub, comma-separated: the agent dials each.
	replicas := "hub-0.example.com:443, hub-1.example.com:443"
	if err := json.Unmarshal([]byte(mustRun(t, h.admin, "join", "edge-3", "-o", "json", "--hub", replicas)), &j); err != nil {
		t.Fatal(err)
	}
	c = agentConfigOf(t, j.Command)
	if want := []string{"hub-0.example.com:443", "hub-1.example.com:443"}; !slices.Equal(c.HubAddrs, want) || c.Validate() != nil {
		t.Errorf("join --hub %q: command %q has hubs %q (validate: %v); want %q", replicas, j.Command, c.HubAddrs, c.Validate(), want)
	}
}

func TestJoinManifest(t *testing.T) {
	h, reg := startTokenHub(t)
	code, out, errOut := runWith(t, h.admin, "", "join", "edge-1", "-o", "manifest", "--hub", "hub.example.com:7443", "--image", "registry.local/agent:dev")
	if code != 0 {
		t.Fatalf("join -o manifest = %d, %q", code, errOut)
	}
	kinds := map[string]*unstructured.Unstructured{}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(out, -1) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("join -o manifest: a document does not decode: %v\n%s", err, doc)
		}
		if obj != nil {
			u := &unstructured.Unstructured{Object: obj}
			kinds[u.GetKind()] = u
		}
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Secret", "PersistentVolumeClaim", "Deployment"} {
		if kinds[k] == nil {
			t.Errorf("join -o manifest has no %s", k)
		}
	}
	token, _, _ := unstructured.NestedString(kinds["Secret"].Object, "stringData", "token")
	containers, _, _ := unstructured.NestedSlice(kinds["Deployment"].Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("Deployment containers = %v", containers)
	}
	c := containers[0].(map[string]any)
	args, _ := json.Marshal(c["args"])
	for _, want := range []string{"--hub=hub.example.com:7443", "--ca-hash=" + h.ca.Hash(), "--cluster=edge-1", "--token=$(TETHER_TOKEN)"} {
		if !strings.Contains(string(args), want) {
			t.Errorf("agent args %s; want %q", args, want)
		}
	}
	if c["image"] != "registry.local/agent:dev" {
		t.Errorf("image = %v; want --image", c["image"])
	}
	if strings.Contains(errOut, "loopback") {
		t.Errorf("stderr %q: no loopback warning expected with --hub", errOut)
	}
	checkSingleUse(t, reg, token, "edge-1")
}

func TestJoinRefusals(t *testing.T) {
	h, _ := startTokenHub(t)
	plain := startOnlineHub(t) // TokenService unimplemented
	for _, tc := range []struct {
		name string
		conf string
		args []string
		want string
	}{
		{"no name", h.admin, []string{"join"}, "accepts 1 arg"},
		{"bad name", h.admin, []string{"join", "Edge_1"}, "DNS subdomain"},
		{"bad output", h.admin, []string{"join", "e", "-o", "yaml"}, "unknown output format"},
		{"bad ttl", h.admin, []string{"join", "e", "--ttl", "0s"}, "--ttl 0s: must be positive"},
		{"helm image by digest", h.admin, []string{"join", "e", "-o", "helm", "--image", "r/a@sha256:00"}, "not a digest"},
		{"bad volume", h.admin, []string{"join", "e", "--data-volume", "host"}, "want pvc or emptydir"},
		{"bad hub", h.admin, []string{"join", "e", "--hub", "nohostport"}, "pass --hub"},
		{"bad replica", h.admin, []string{"join", "e", "--hub", "h0:443,h1"}, `entry 2 of 2, "h1"`},
		{"viewer", h.viewer, []string{"join", "e"}, "ask an admin"},
		{"no token service", plain.admin, []string{"join", "e"}, "does not serve this"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runWith(t, tc.conf, "", tc.args...)
			if code != 1 || !strings.Contains(errOut, tc.want) {
				t.Errorf("tetherctl %v = %d, %q; want 1 and %q", tc.args, code, errOut, tc.want)
			}
		})
	}
}

func TestJoinHelm(t *testing.T) {
	h, reg := startTokenHub(t)
	code, out, errOut := runWith(t, h.admin, "", "join", "edge-1", "-o", "helm", "--hub", "h0.example.com:7443,h1.example.com:7443",
		"--image", "registry.local:5000/agent:dev", "--chart", "./charts/tether-agent")
	if code != 0 {
		t.Fatalf("join -o helm = %d, %q", code, errOut)
	}
	head, rest, ok := strings.Cut(out, "\n")
	const want = "helm upgrade --install tether-agent ./charts/tether-agent --namespace tether-system --create-namespace --values - <<'EOF'"
	if !ok || head != want || !strings.HasSuffix(rest, "\nEOF\n") {
		t.Fatalf("join -o helm =\n%s\nwant the first line %q and the values up to EOF", out, want)
	}
	var v struct {
		Cluster, Hub, CAHash string
		BootstrapToken       struct{ Value string }
		Image                struct{ Repository, Tag string }
		Persistence          struct{ Type string }
	}
	if err := yaml.Unmarshal([]byte(strings.TrimSuffix(rest, "EOF\n")), &v); err != nil {
		t.Fatalf("join -o helm values: %v\n%s", err, rest)
	}
	if v.Cluster != "edge-1" || v.Hub != "h0.example.com:7443,h1.example.com:7443" || v.CAHash != h.ca.Hash() ||
		v.Image.Repository != "registry.local:5000/agent" || v.Image.Tag != "dev" || v.Persistence.Type != "pvc" {
		t.Errorf("join -o helm values = %+v", v)
	}
	checkSingleUse(t, reg, v.BootstrapToken.Value, "edge-1")
}
