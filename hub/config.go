package hub

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"time"

	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/authority"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/leader"
	"github.com/tetherproj/tether/hub/memberproxy"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/serving"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/protocol"
)

// Defaults of Config.
const (
	// DefaultListen is the one gRPC port for agents and clients.
	DefaultListen = "0.0.0.0:7443"
	// DefaultMaxObjectBytes is the largest object a client may apply: 1.5 MiB,
	// etcd's default request limit, so that a stored object always fits in
	// one etcd write.
	DefaultMaxObjectBytes = 3 << 19
	// DefaultLeaderTTL is the lease of a replica's leadership session.
	DefaultLeaderTTL = leader.DefaultTTL
	// DefaultMaxWorksPerCluster is the most works the hub serves to one
	// cluster and the most the scheduler places there.
	DefaultMaxWorksPerCluster = agentapi.DefaultMaxWorks
	// DefaultUnreachableToleration is how long a binding that fails over
	// (--failover-unreachable, or its policy's spec.failover.cluster)
	// tolerates an unreachable cluster when its policy has no toleration
	// of its own: Karmada's --default-unreachable-toleration-seconds=300.
	DefaultUnreachableToleration = place.DefaultUnreachableToleration
	// DefaultGracefulEvictionTimeout is how long an eviction task without
	// a grace period of its own keeps the old cluster's copy when the
	// replacement does not become healthy: Karmada's
	// --graceful-eviction-timeout=10m.
	DefaultGracefulEvictionTimeout = place.DefaultGracefulEvictionTimeout
	// MinAgentCertLifetime is the shortest agent certificate lifetime: an
	// agent renews at about 75% of it and must have time to retry.
	MinAgentCertLifetime = time.Minute
	// DefaultServingCertLifetime and MinServingCertLifetime bound the
	// serving certificate's lifetime; it is re-issued at about two thirds
	// of it while the hub runs (hub/serving).
	DefaultServingCertLifetime = serving.DefaultLifetime
	MinServingCertLifetime     = serving.MinLifetime
	// DefaultWatchStallTimeout is how long a client's Watch or
	// WatchPlacements whose buffer is full waits for the client to take a
	// change before it is cut (clientapi.DefaultWatchStall, 1 min).
	DefaultWatchStallTimeout = clientapi.DefaultWatchStall
	// shutdownGrace bounds a graceful stop: agents get Goodbye, in-flight
	// RPCs finish, then the server stops hard.
	shutdownGrace = 10 * time.Second
)

// Files the hub writes in its data directory.
const (
	// AdminConfFile is the admin's credentials, written on first start, its
	// certificate renewed before it expires (hub/adminconf), otherwise
	// never overwritten (internal/clientconfig).
	AdminConfFile = "admin.conf"
	// AddrFile holds the address the hub actually listens on, host:port,
	// rewritten at every start (--listen 127.0.0.1:0 picks a free port) and
	// removed on a graceful stop.
	AddrFile = "hub.addr"
	// PKIDir holds the CA: ca.crt and ca.key.
	PKIDir = "pki"
)

// Config is everything tether-hub's flags say.
type Config struct {
	// DataDir holds the embedded etcd, the CA, admin.conf and hub.addr.
	DataDir string
	// Listen is the gRPC address, host:port; port 0 picks a free one.
	Listen string
	// EtcdEndpoints of an external etcd cluster; empty starts an embedded
	// member in DataDir.
	EtcdEndpoints []string
	// EmbeddedQuotaBytes is the embedded etcd's database size limit
	// (--embedded-etcd-quota); zero: store's default, 8 GiB.
	EmbeddedQuotaBytes int64
	// EtcdTLS is the TLS to the external cluster (--etcd-cafile,
	// --etcd-certfile, --etcd-keyfile); zero means plaintext.
	EtcdTLS store.TLS
	// CACertFile and CAKeyFile give the hub's CA as PEM files (--ca-cert,
	// --ca-key), e.g. one Kubernetes Secret mounted into every replica;
	// empty means DataDir/pki, created on first start.
	CACertFile, CAKeyFile string
	// CAEncryptionKeyFile (--ca-encryption-key-file) holds a 32-byte key,
	// base64: the CA is created once, sealed with the key in etcd, and
	// every replica given the key opens it. Exclusive with CACertFile.
	CAEncryptionKeyFile string
	// LeaseDuration: a cluster without a heartbeat for this long turns
	// Unknown; zero means protocol.LeaseDuration.
	LeaseDuration time.Duration
	// MaxObjectBytes is the largest object a client may apply; zero means
	// DefaultMaxObjectBytes.
	MaxObjectBytes int
	// TLSSANs are extra names (DNS names or IP addresses) for the serving
	// certificate, besides loopback, the host name, the interface addresses
	// and the listen host: the address agents and clients dial from outside,
	// e.g. a LoadBalancer's name (--tls-san, repeatable).
	TLSSANs []string
	// MetricsListen, when set, serves /healthz, /readyz and /metrics over
	// plain HTTP on this address.
	MetricsListen string
	// ProxyListen, when set, serves the member proxy (hub/memberproxy)
	// over HTTPS on this address, with the serving certificate of the
	// gRPC port and users' client certificates (--proxy-listen).
	ProxyListen string
	// Proxy bounds the member proxy per user and per cluster; zero fields
	// are memberproxy's defaults.
	Proxy memberproxy.Limits
	// Version is the hub's version, sent to agents in Welcome.
	Version string
	// AgentCertLifetime is the lifetime of the certificates agents get by
	// registering and renewing (they renew at about 75% of it); zero means
	// membership.DefaultAgentCertLifetime.
	AgentCertLifetime time.Duration
	// ServingCertLifetime is the lifetime of the hub's serving certificate,
	// re-issued at about two thirds of it without a restart
	// (--serving-cert-lifetime); zero means DefaultServingCertLifetime.
	ServingCertLifetime time.Duration
	// AcceptStoreReset is the operator's acceptance of the store as it is
	// (--accept-store-reset): after hub/authority found it wiped, replaced
	// or restored from an older snapshot, the hub causes no delete until a
	// start with this set. It makes the store the new baseline; later
	// starts need not repeat it.
	AcceptStoreReset bool
	// AdoptIdentities are hub identities whose agents this hub adopts
	// (--adopt-identity): agents whose works came from one of them trust
	// this hub's store again, though it is another store or behind what
	// they saw (hub/authority.Adoption); it implies AcceptStoreReset. A
	// store that lost its identity key gets the first one back.
	AdoptIdentities []string
	// AdoptDeleteUnknown makes adopted agents delete the works this hub
	// does not have (--adopt-delete-unknown); otherwise they keep them,
	// unmanaged and listed in their cluster's conditions.
	AdoptDeleteUnknown bool
	// FailoverUnreachable makes every Divided binding leave a cluster that
	// stays unreachable longer than its toleration, as if every policy set
	// spec.failover.cluster. Off: only the policies that set it fail over.
	FailoverUnreachable bool
	// NewClustersCordoned makes every newly registered cluster (by token or
	// by a minted certificate's first heartbeat) start cordoned: its record
	// carries the NoSchedule taint node.tether.io/cordoned, so nothing new
	// is placed there until an admin runs tetherctl uncordon. Off by
	// default (a new cluster is schedulable at once, as in Karmada).
	NewClustersCordoned bool
	// UnreachableToleration is the toleration of the unreachable and
	// not-ready NoExecute taints a failing-over binding gets when its
	// policy has none; zero means DefaultUnreachableToleration.
	UnreachableToleration time.Duration
	// GracefulEvictionTimeout is how long an eviction task without a grace
	// period of its own keeps the evicted cluster's copy; zero means
	// DefaultGracefulEvictionTimeout.
	GracefulEvictionTimeout time.Duration
	// MaxWorksPerCluster is the most works the hub serves to one cluster
	// (the excess is withheld, never deleted) and the most the scheduler
	// places there; zero means DefaultMaxWorksPerCluster.
	MaxWorksPerCluster int
	// HandshakeTimeout closes a connection that has not finished its TLS
	// handshake by then, MaxConnectionIdle one without a call in progress
	// for that long, and MaxStreamsPerConnection is the most calls one
	// connection has at once; zero means agentapi.DefaultHandshakeTimeout
	// (10 s), DefaultMaxConnectionIdle (5 min) and
	// DefaultMaxConcurrentStreams (100).
	HandshakeTimeout        time.Duration
	MaxConnectionIdle       time.Duration
	MaxStreamsPerConnection uint32
	// RegistrationRate (per second) and RegistrationBurst bound agent
	// registrations from one source address, under a total ceiling of
	// agentapi.DefaultRegistrationTotalRate; zero means
	// agentapi.DefaultRegistrationRate (1) and DefaultRegistrationBurst (10).
	RegistrationRate  float64
	RegistrationBurst int
	// LeaderTTL is the lease of the replica's leadership session
	// (hub/leader): a dead leader is replaced, and a leader cut off from
	// etcd stops its controllers, within it; zero means leader.DefaultTTL.
	LeaderTTL time.Duration
	// WebhookAllowCIDRs are addresses interpreter webhooks may be called at
	// although the webhook policy denies them: loopback, link-local and
	// cloud metadata (internal/interpreter/webhook.Policy;
	// --webhook-allow-cidrs). Empty: all of those are denied.
	WebhookAllowCIDRs []netip.Prefix
	// SkippedPropagatingNamespaces are regular expressions, each anchored
	// ^…$, of namespaces whose templates are never propagated and whose
	// Namespaces are not auto-propagated (--skipped-propagating-namespaces,
	// Karmada's flag); nil means bind.DefaultSkippedNamespaces
	// (kube-.*), empty skips none.
	SkippedPropagatingNamespaces []string
	// NoNamespacePropagation turns namespace auto-propagation off
	// (--propagate-namespaces=false, Karmada's --controllers=-namespace):
	// Namespaces then go only where a ClusterPropagationPolicy sends them.
	NoNamespacePropagation bool
	// WatchStallTimeout is how long a client's Watch or WatchPlacements
	// whose buffer is full waits for the client to take a change before it
	// is cut RESOURCE_EXHAUSTED, to watch again from its last revision
	// (clientapi.Config.WatchStall; --watch-stall-timeout); zero means
	// DefaultWatchStallTimeout.
	WatchStallTimeout time.Duration
}

// withDefaults returns cfg with zero values replaced by defaults, or an
// error naming the bad field.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.DataDir == "" {
		return cfg, errors.New("data dir: required")
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return cfg, fmt.Errorf("data dir: %w", err)
	}
	cfg.DataDir = abs
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if _, _, err := net.SplitHostPort(cfg.Listen); err != nil {
		return cfg, fmt.Errorf("listen %q: want host:port: %w", cfg.Listen, err)
	}
	if err := cfg.checkCA(); err != nil {
		return cfg, err
	}
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = protocol.LeaseDuration
	}
	if cfg.LeaseDuration < 0 {
		return cfg, fmt.Errorf("lease duration %s: must be positive", cfg.LeaseDuration)
	}
	if cfg.AgentCertLifetime == 0 {
		cfg.AgentCertLifetime = membership.DefaultAgentCertLifetime
	}
	if cfg.AgentCertLifetime < MinAgentCertLifetime {
		return cfg, fmt.Errorf("agent certificate lifetime %s: must be at least %s", cfg.AgentCertLifetime, MinAgentCertLifetime)
	}
	if cfg.ServingCertLifetime == 0 {
		cfg.ServingCertLifetime = DefaultServingCertLifetime
	}
	if cfg.ServingCertLifetime < MinServingCertLifetime {
		return cfg, fmt.Errorf("serving certificate lifetime %s: must be at least %s", cfg.ServingCertLifetime, MinServingCertLifetime)
	}
	if cfg.MaxObjectBytes == 0 {
		cfg.MaxObjectBytes = DefaultMaxObjectBytes
	}
	if cfg.UnreachableToleration == 0 {
		cfg.UnreachableToleration = DefaultUnreachableToleration
	}
	if cfg.GracefulEvictionTimeout == 0 {
		cfg.GracefulEvictionTimeout = DefaultGracefulEvictionTimeout
	}
	if cfg.GracefulEvictionTimeout < 0 {
		return cfg, fmt.Errorf("graceful eviction timeout %s: must be positive", cfg.GracefulEvictionTimeout)
	}
	if cfg.UnreachableToleration < 0 {
		return cfg, fmt.Errorf("unreachable toleration %s: must be positive", cfg.UnreachableToleration)
	}
	if cfg.MaxWorksPerCluster == 0 {
		cfg.MaxWorksPerCluster = DefaultMaxWorksPerCluster
	}
	if cfg.MaxWorksPerCluster < 0 {
		return cfg, fmt.Errorf("max works per cluster %d: must be positive", cfg.MaxWorksPerCluster)
	}
	if cfg.HandshakeTimeout < 0 || cfg.MaxConnectionIdle < 0 {
		return cfg, fmt.Errorf("handshake timeout %s, max connection idle %s: must be positive", cfg.HandshakeTimeout, cfg.MaxConnectionIdle)
	}
	if cfg.RegistrationRate < 0 || cfg.RegistrationBurst < 0 {
		return cfg, fmt.Errorf("registration rate %g, burst %d: must be positive", cfg.RegistrationRate, cfg.RegistrationBurst)
	}
	if cfg.MaxObjectBytes < 0 {
		return cfg, fmt.Errorf("max object bytes %d: must be positive", cfg.MaxObjectBytes)
	}
	if cfg.WatchStallTimeout == 0 {
		cfg.WatchStallTimeout = DefaultWatchStallTimeout
	}
	if cfg.WatchStallTimeout < 0 {
		return cfg, fmt.Errorf("watch stall timeout %s: must be positive", cfg.WatchStallTimeout)
	}
	if cfg.SkippedPropagatingNamespaces == nil {
		cfg.SkippedPropagatingNamespaces = bind.DefaultSkippedNamespaces
	}
	if _, err := bind.NewFilter(cfg.SkippedPropagatingNamespaces); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// checkCA refuses CA settings that leave a source ambiguous or half given.
func (cfg Config) checkCA() error {
	switch {
	case (cfg.CACertFile == "") != (cfg.CAKeyFile == ""):
		return errors.New("CA files: give both the certificate (--ca-cert) and the key (--ca-key), or neither")
	case cfg.CACertFile != "" && cfg.CAEncryptionKeyFile != "":
		return errors.New("CA: give either the CA files (--ca-cert/--ca-key) or --ca-encryption-key-file, not both")
	}
	return nil
}

func (cfg Config) path(name string) string { return filepath.Join(cfg.DataDir, name) }

// namespaceFilter is the detector's filter when namespace auto-propagation
// is on (for Simulate), nil when it is off. The patterns were checked by
// withDefaults.
func (h *Hub) namespaceFilter() *bind.Filter {
	if h.cfg.NoNamespacePropagation {
		return nil
	}
	f, err := bind.NewFilter(h.cfg.SkippedPropagatingNamespaces)
	if err != nil {
		return nil
	}
	return f
}

// adoption is what the operator adopts at this start.
func (c Config) adoption() authority.Adopt {
	return authority.Adopt{Accept: c.AcceptStoreReset, Identities: c.AdoptIdentities, DeleteUnknown: c.AdoptDeleteUnknown}
}

// restoredIdentity is the identity a store that lost its identity key gets
// back: the first adopted one ("" for none).
func (c Config) restoredIdentity() string {
	if len(c.AdoptIdentities) == 0 {
		return ""
	}
	return c.AdoptIdentities[0]
}
