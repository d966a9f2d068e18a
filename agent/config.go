package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tetherproj/tether/agent/customizations"
	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/memberproxy"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/hubaddr"
)

// DefaultEvictionGrace is how long works the hub no longer claims are kept
// before their objects are deleted (DESIGN §4).
const DefaultEvictionGrace = 60 * time.Minute

// Config configures an agent; cmd/tether-agent fills it from flags. Error
// messages name the flag of a field.
type Config struct {
	// HubAddrs are the hub's addresses, host:port each (--hub, comma-
	// separated; internal/hubaddr): one address (a hub, or a load balancer in
	// front of its replicas), or the address of each replica of one hub
	// (one etcd, one CA). With several, the agent streams to one replica,
	// chosen in an order shuffled per agent, and moves to the next that
	// answers when it goes; registration and certificate renewal use any
	// of them. Each replica's serving certificate must cover the host the
	// agent dials it by.
	HubAddrs []string
	// CertFile and KeyFile are the agent's client certificate and key, PEM
	// (--cert, --key); they are read again on every connection, so a
	// certificate replaced on disk is used without a restart.
	CertFile, KeyFile string
	// CAFile holds the CA certificates that sign the hub's serving
	// certificate, PEM (--ca).
	CAFile string
	// Token, CAHash and ClusterName register the agent with a bootstrap
	// token (--token, --ca-hash, --cluster; all three or none): Run first
	// pins the hub's CA by CAHash, sends a CSR to Register, and keeps the
	// key, certificate and CA in DataDir (register.go), in place of
	// CertFile, KeyFile and CAFile.
	Token, CAHash, ClusterName string
	// Kubeconfig reaches the member cluster (--kubeconfig); empty means the
	// in-cluster configuration.
	Kubeconfig string
	// DataDir holds the local state (--data-dir), and a registered
	// agent's credentials; required even with StateSecret, which takes
	// only the state.
	DataDir string
	// StateSecret, "namespace/name", keeps the state (the works held, the
	// hub identity, the status digests) in that Secret of the member
	// cluster instead of DataDir, for agents without a persistent volume
	// (--state-secret). The agent creates it; a Secret holds at most
	// 1 MiB. Empty keeps the state in DataDir.
	StateSecret string
	// EvictionGrace is how long an orphaned work is kept before its
	// objects are deleted; 0 keeps them forever (--eviction-grace).
	EvictionGrace time.Duration
	// MetricsAddr, host:port, serves the agent's Prometheus metrics on
	// /metrics (--metrics-addr), among them every object the agent deleted
	// or orphaned in the member cluster, by reason
	// (tether_agent_member_deletes_total, _evictions_total,
	// _orphans_total). Empty serves none.
	MetricsAddr string
	// HealthAddr, host:port, serves /healthz (live: the agent's loops go
	// on) and /readyz (ready: the hub's SyncDone received since the start
	// and the member API server ready at its last check) for the kubelet's
	// probes (--health-addr; cmd/tether-agent's default :8081). It may be
	// MetricsAddr: one server then serves all three. Empty serves none.
	HealthAddr string
	// MemberCheckEvery is how often the member API server's /readyz is
	// asked, for /readyz; 0 is DefaultMemberCheckEvery.
	MemberCheckEvery time.Duration
	// LuaMemoryFraction is the share of the agent's memory limit (the
	// lower of Go's soft limit, --memory-limit or $GOMEMLIMIT, and the
	// container's cgroup limit) that one Lua call of the hub's
	// customizations may allocate, at most luavm's 256 MiB; past it the
	// call fails and the agent goes on (--lua-memory-fraction). 0 is
	// DefaultLuaMemoryFraction.
	LuaMemoryFraction float64
	// LuaConcurrency bounds the Lua calls running at once; one that finds
	// no slot before its deadline fails (--lua-concurrency). 0 is
	// DefaultLuaConcurrency.
	LuaConcurrency int
	// Webhooks says which of the hub's interpreter webhooks the agent may
	// call (--refuse-interpreter-webhooks, --interpreter-webhook-hosts): a
	// refused one is named in the customizations' ack and never called,
	// and the operations its rules select fail, saying so in the works'
	// status.
	Webhooks customizations.WebhookPolicy
	// WebhookAllowCIDRs are addresses webhooks may be called at although
	// the webhook address policy denies them (loopback, link-local, cloud
	// metadata) (--webhook-allow-cidrs).
	WebhookAllowCIDRs []netip.Prefix
	// Topology says where the cluster runs and which labels it proposes
	// for its Cluster record (--provider, --region, --zones, --labels):
	// policies select clusters by them (fieldSelector provider/region/zone,
	// labelSelector). Reported with every heartbeat.
	Topology *agentv1.Topology
	// AgentVersion is sent to the hub; empty is internal/version.Version.
	AgentVersion string
	// Member replaces the member-cluster side built from Kubeconfig: for
	// in-process tests and the load tool's in-memory members.
	Member *Member
	// Backoff overrides the reconnect backoff (tests); nil is the default.
	Backoff func(attempt int) time.Duration
	// MemberProxy is what the hub's users may do in the member through
	// the hub's member proxy (--member-proxy, agent/memberproxy): "off",
	// "read-only" or "full" (empty). The member's RBAC decides on top of
	// it, for the impersonated "tether:" identities.
	MemberProxy string
}

// Member is the member-cluster side of an agent: what the hub client
// drives.
type Member struct {
	Applier  hubclient.Applier
	Status   hubclient.StatusSource   // nil: no status reports
	Capacity hubclient.CapacitySource // nil: heartbeats without capacity
	// Runners run alongside the hub client until ctx ends (informers,
	// drift repair); Run waits for them.
	Runners []Runner
	// OnSettings, when set, receives the hub's Settings (Welcome, then
	// every change), e.g. the status reports' minimum interval.
	OnSettings func(*Settings)
	// Customizations loads the user's interpreter customizations into the
	// member side's interpreter; nil runs with the built-in rules only.
	Customizations hubclient.Customizations
	// Ping asks the member API server whether it is ready, for the agent's
	// /readyz; nil counts the member as always reachable.
	Ping func(context.Context) error
	// Proxy serves the hub's member proxy requests (agent/memberproxy's
	// Handler); nil serves none.
	Proxy http.Handler
}

// Settings are the hub's parameters for the agent (agentv1.Settings).
type Settings = agentv1.Settings

// Runner is a component with a life: Run returns once ctx ends and its
// goroutines have exited.
type Runner interface {
	Run(ctx context.Context) error
}

// caHashRE is the form of --ca-hash: kubeadm's pin.
var caHashRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// Validate checks c and names the flag of the first bad field.
func (c Config) Validate() error {
	if c.registering() {
		if err := c.validateRegistration(); err != nil {
			return err
		}
		c = c.withCredentialsIn()
	}
	if err := hubaddr.Validate("--hub", c.HubAddrs); err != nil {
		return err
	}
	for _, f := range []struct{ flag, value string }{{"--cert", c.CertFile}, {"--key", c.KeyFile}, {"--ca", c.CAFile}} {
		if f.value == "" {
			return fmt.Errorf("%s: required: the agent connects with its client certificate (--cert, --key) and the hub CA (--ca)", f.flag)
		}
	}
	if c.DataDir == "" {
		return errors.New("--data-dir: required: where the agent keeps the works it holds")
	}
	if err := validateStateSecret(c.StateSecret); err != nil {
		return err
	}
	if c.EvictionGrace < 0 {
		return fmt.Errorf("--eviction-grace %s: must be 0 (off) or positive", c.EvictionGrace)
	}
	for _, f := range []struct{ flag, value string }{{"--metrics-addr", c.MetricsAddr}, {"--health-addr", c.HealthAddr}} {
		if f.value == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(f.value); err != nil {
			return fmt.Errorf("%s %q: want host:port: %v", f.flag, f.value, err)
		}
	}
	if err := c.validateLua(); err != nil {
		return err
	}
	if _, err := memberproxy.ParseMode(c.MemberProxy); err != nil {
		return err
	}
	if c.MemberCheckEvery < 0 {
		return fmt.Errorf("member check interval %s: must be 0 (default) or positive", c.MemberCheckEvery)
	}
	return validateTopology(c.Topology)
}

// validateLua checks --lua-memory-fraction, --lua-concurrency and the
// webhook policy.
func (c Config) validateLua() error {
	if c.LuaMemoryFraction < 0 || c.LuaMemoryFraction > 1 {
		return fmt.Errorf("--lua-memory-fraction %g: want a share of the memory limit in (0, 1]", c.LuaMemoryFraction)
	}
	if c.LuaConcurrency < 0 {
		return fmt.Errorf("--lua-concurrency %d: want 1 or more", c.LuaConcurrency)
	}
	if c.Webhooks.Refuse && len(c.Webhooks.Hosts) > 0 {
		return errors.New("--interpreter-webhook-hosts: not with --refuse-interpreter-webhooks, which refuses every host")
	}
	return c.Webhooks.Validate()
}

// validateStateSecret checks --state-secret: empty, or namespace/name.
func validateStateSecret(s string) error {
	if s == "" {
		return nil
	}
	ns, name, err := splitStateSecret(s)
	if err != nil {
		return err
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("--state-secret %q: namespace: %s", s, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("--state-secret %q: name: %s", s, strings.Join(errs, "; "))
	}
	return nil
}

// splitStateSecret splits --state-secret into namespace and name.
func splitStateSecret(s string) (namespace, name string, err error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" {
		return "", "", fmt.Errorf("--state-secret %q: want NAMESPACE/NAME of the Secret to keep the state in", s)
	}
	return ns, name, nil
}

// validateTopology checks --labels (Kubernetes label syntax) and --zones.
func validateTopology(t *agentv1.Topology) error {
	for k, v := range t.GetLabels() {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("--labels: key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("--labels: value %q of %s: %s", v, k, strings.Join(errs, "; "))
		}
	}
	for _, z := range t.GetZones() {
		if z == "" {
			return errors.New("--zones: empty zone name")
		}
	}
	return nil
}

// validateRegistration checks the registration flags.
func (c Config) validateRegistration() error {
	for _, f := range []struct{ flag, value string }{{"--token", c.Token}, {"--ca-hash", c.CAHash}, {"--cluster", c.ClusterName}} {
		if f.value == "" {
			return fmt.Errorf("%s: required with --token, --ca-hash and --cluster: registration needs all three (from `tetherctl token create -o json`)", f.flag)
		}
	}
	if !caHashRE.MatchString(c.CAHash) {
		return fmt.Errorf("--ca-hash %q: want sha256:<64 hex digits>, as `tetherctl token create` prints it", c.CAHash)
	}
	if c.CertFile != "" || c.KeyFile != "" || c.CAFile != "" {
		return errors.New("--cert, --key, --ca: not with --token: a registering agent keeps its credentials in --data-dir")
	}
	if c.DataDir == "" {
		return errors.New("--data-dir: required: where the agent keeps its works and its credentials")
	}
	return nil
}
