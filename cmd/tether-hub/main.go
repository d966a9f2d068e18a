// Command tether-hub runs Tether's hub: the store, the controllers and the
// one gRPC port that agents and clients connect to.
//
//	tether-hub --data-dir /var/lib/tether --listen 0.0.0.0:7443
//	tether-hub mint-agent --data-dir /var/lib/tether --cluster edge-1 --out ./edge-1
//	tether-hub admin-conf --data-dir /var/lib/tether   (prints admin.conf)
//
// The flags become a hub.Config; hub.New(cfg, logger).Run(ctx) is the hub
// until SIGINT or SIGTERM stops it gracefully.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tetherproj/tether/hub"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/gcflags"
	"github.com/tetherproj/tether/internal/logging"
	"github.com/tetherproj/tether/internal/pprofserve"
	"github.com/tetherproj/tether/internal/protocol"
	"github.com/tetherproj/tether/internal/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "mint-agent" {
		return mintAgent(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "admin-conf" {
		return adminConfCmd(args[1:], stdout, stderr)
	}
	opts, err := parseOptions(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, errVersion) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "tether-hub: %v\n", err)
		return 2
	}
	if err := opts.gc.Apply(); err != nil {
		fmt.Fprintf(stderr, "tether-hub: %v\n", err)
		return 2
	}
	logger, err := logging.New(opts.log)
	if err != nil {
		fmt.Fprintf(stderr, "tether-hub: %v\n", err)
		return 2
	}
	h, err := hub.New(opts.hub, logger)
	if err != nil {
		logger.Error("invalid configuration", "error", err)
		return 2
	}
	if opts.pprofAddr != "" {
		stop, err := pprofserve.Serve(opts.pprofAddr, logger)
		if err != nil {
			logger.Error("--pprof-addr", "error", err)
			return 2
		}
		defer stop()
	}
	if err := h.Run(ctx); err != nil {
		logger.Error("hub failed", "error", err)
		return 1
	}
	return 0
}

// defaultGCPercent is the hub's garbage collection target (Go's GOGC)
// unless --gc-percent or $GOGC sets one: Go's default, 100. The hub's live
// heap grows with works and clusters (about 1 GB for a million works) and
// its heap peaks at about twice that: the million's resident peak is
// 2.1-2.2 GiB at 100, 1.5-1.8 GiB at 50. 50 is not the default: a hub
// that is short of CPU spends more of it on collecting (the million's
// works phase took the hub 3-16 % more CPU-seconds at 50), and 10,000
// agents given 100 works each once lost 86% of their leases at once at 50
// (their renewals waited on etcd behind the hub's backlog; the hub's own
// streams renew them directly since 75c6592 and 90c88a3; README, "Scale,
// measured").
// --memory-limit (some 90% of the container's limit) bounds the heap by
// collecting more often only near the limit.
const defaultGCPercent = 100

// errVersion: --version was printed.
var errVersion = errors.New("version printed")

// options are the command line's settings.
type options struct {
	hub hub.Config
	log logging.Options
	// pprofAddr serves net/http/pprof when set (pprof.go).
	pprofAddr string
	gc        gcflags.Options
}

// parseFlags turns the command line into the hub's and the logger's
// configuration.
func parseFlags(args []string, stdout, stderr io.Writer) (hub.Config, logging.Options, error) {
	o, err := parseOptions(args, stdout, stderr)
	return o.hub, o.log, err
}

// parseOptions turns the command line into options.
func parseOptions(args []string, stdout, stderr io.Writer) (options, error) {
	var o options
	var err error
	o.hub, o.log, err = parseFlagSet(args, stdout, stderr, &o)
	return o, err
}

// parseFlagSet parses every flag; --pprof-addr, --gc-percent and
// --memory-limit into o.
func parseFlagSet(args []string, stdout, stderr io.Writer, o *options) (hub.Config, logging.Options, error) {
	fs := flag.NewFlagSet("tether-hub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg hub.Config
	logOpts := logging.Options{Name: "tether-hub", Output: stderr}
	var endpoints, maxObject, skippedNamespaces, embeddedQuota string
	var showVersion, propagateNamespaces bool
	fs.StringVar(&cfg.DataDir, "data-dir", "", "directory of the embedded etcd, the CA (pki/), admin.conf and hub.addr (required)")
	fs.StringVar(&cfg.Listen, "listen", hub.DefaultListen, "the one gRPC address for agents and clients, host:port (port 0 picks a free port, written to DATA_DIR/hub.addr)")
	fs.StringVar(&endpoints, "etcd-endpoints", "", "comma-separated URLs of an external etcd cluster; empty starts an embedded etcd in --data-dir")
	fs.StringVar(&cfg.EtcdTLS.CAFile, "etcd-cafile", "", "PEM CA that signs the external etcd's serving certificates (with https:// --etcd-endpoints); empty: the system's roots")
	fs.StringVar(&cfg.EtcdTLS.CertFile, "etcd-certfile", "", "PEM client certificate the hub presents to the external etcd (with --etcd-keyfile)")
	fs.StringVar(&cfg.EtcdTLS.KeyFile, "etcd-keyfile", "", "PEM key of --etcd-certfile")
	fs.StringVar(&cfg.CACertFile, "ca-cert", "", "PEM certificate of the hub's CA, the same for every replica (e.g. a mounted Kubernetes Secret's tls.crt; with --ca-key); empty: DATA_DIR/pki/ca.crt, created on first start")
	fs.StringVar(&cfg.CAKeyFile, "ca-key", "", "PEM key of --ca-cert")
	fs.StringVar(&cfg.CAEncryptionKeyFile, "ca-encryption-key-file", "", "file holding 32 random bytes, base64 (head -c 32 /dev/urandom | base64): the first replica creates the CA and stores it in etcd encrypted (AES-256-GCM) with this key, every replica given the same file uses it")
	fs.DurationVar(&cfg.LeaseDuration, "lease-duration", protocol.LeaseDuration, "a cluster without a heartbeat for this long turns Unknown")
	fs.StringVar(&embeddedQuota, "embedded-etcd-quota", "8Gi", "size limit of the embedded etcd's database (a Kubernetes quantity); past it etcd refuses writes (NOSPACE) until compacted and defragmented")
	fs.StringVar(&maxObject, "max-object-bytes", "1.5Mi", "largest object a client may apply (a Kubernetes quantity, e.g. 1.5Mi)")
	fs.Func("tls-san", "an extra DNS name or IP address for the hub's serving certificate, e.g. the LoadBalancer name agents dial (repeatable)", func(v string) error {
		if v == "" || strings.ContainsAny(v, " ,/") {
			return fmt.Errorf("want one DNS name or IP address, got %q", v)
		}
		cfg.TLSSANs = append(cfg.TLSSANs, v)
		return nil
	})
	fs.DurationVar(&cfg.AgentCertLifetime, "agent-cert-lifetime", membership.DefaultAgentCertLifetime, "lifetime of the certificates agents get by registering and renewing; agents renew at about 75% of it (at least 1m)")
	fs.DurationVar(&cfg.ServingCertLifetime, "serving-cert-lifetime", hub.DefaultServingCertLifetime, "lifetime of the hub's serving certificate; the hub issues a new one at about two thirds of it while it runs, "+
		"new connections get the new one and open ones go on (at least 1m)")
	fs.BoolVar(&cfg.AcceptStoreReset, "accept-store-reset", false, "accept the store as it is after the hub found it wiped, replaced or restored from an older snapshot "+
		"(it then causes no delete in any member until started once with this flag); the store becomes the new baseline, later starts need not repeat it")
	fs.Func("adopt-identity", "adopt the agents whose works came from the hub of this identity (repeatable): they trust this hub's store again, though it is another store or "+
		"behind what they saw (implies --accept-store-reset); a store that lost its identity gets the first one back. Agents keep the works this hub does not have, unmanaged", func(v string) error {
		if v == "" {
			return fmt.Errorf("an empty identity")
		}
		cfg.AdoptIdentities = append(cfg.AdoptIdentities, v)
		return nil
	})
	fs.BoolVar(&cfg.AdoptDeleteUnknown, "adopt-delete-unknown", false, "with --accept-store-reset or --adopt-identity: adopted agents delete the works this hub does not have, instead of keeping them unmanaged")
	fs.BoolVar(&cfg.NewClustersCordoned, "new-clusters-cordoned", false, "newly registered clusters start cordoned (taint node.tether.io/cordoned:NoSchedule): nothing is placed there until an admin runs tetherctl uncordon; off: a new cluster is schedulable at once")
	fs.BoolVar(&cfg.FailoverUnreachable, "failover-unreachable", false, "move the replicas of every Divided workload off a cluster that stays unreachable longer than its toleration; off: only policies with spec.failover.cluster fail over (Duplicated workloads never do)")
	fs.DurationVar(&cfg.UnreachableToleration, "default-unreachable-toleration", hub.DefaultUnreachableToleration, "how long a workload that fails over tolerates an unreachable cluster when its policy has no toleration of its own (Karmada's --default-unreachable-toleration-seconds)")
	fs.DurationVar(&cfg.GracefulEvictionTimeout, "graceful-eviction-timeout", hub.DefaultGracefulEvictionTimeout, "how long an evicted cluster keeps its copy when the replacement does not become healthy and the eviction has no grace period of its own (Karmada's --graceful-eviction-timeout); a cluster that is not Ready keeps it until a replacement is healthy")
	fs.IntVar(&cfg.MaxWorksPerCluster, "max-works-per-cluster", hub.DefaultMaxWorksPerCluster, "most works the hub serves to one cluster: the scheduler places no new workload on a cluster holding that many, and a stream withholds the excess (never deletes it)")
	fs.DurationVar(&cfg.HandshakeTimeout, "handshake-timeout", agentapi.DefaultHandshakeTimeout, "a connection that has not finished its TLS handshake by then is closed")
	fs.DurationVar(&cfg.MaxConnectionIdle, "max-connection-idle", agentapi.DefaultMaxConnectionIdle, "a connection without any call in progress for this long is closed (an agent's stream is a call: connected agents are never idle)")
	fs.Func("max-streams-per-connection", fmt.Sprintf("most calls one connection has in progress at once; further ones wait (default %d)", agentapi.DefaultMaxConcurrentStreams), func(v string) error {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			return fmt.Errorf("want a positive number, got %q", v)
		}
		cfg.MaxStreamsPerConnection = uint32(n)
		return nil
	})
	fs.Float64Var(&cfg.RegistrationRate, "registration-rate", agentapi.DefaultRegistrationRate, fmt.Sprintf("agent registrations per second served from one source address (the hub serves at most %g per second in all)", float64(agentapi.DefaultRegistrationTotalRate)))
	fs.IntVar(&cfg.RegistrationBurst, "registration-burst", agentapi.DefaultRegistrationBurst, "agent registrations served at once from one source address")
	fs.DurationVar(&cfg.LeaderTTL, "leader-ttl", hub.DefaultLeaderTTL, "lease of this replica's leadership session: with several replicas on one etcd, a dead leader is replaced, and a leader cut off from etcd stops its controllers, within it (whole seconds)")
	fs.Func("webhook-allow-cidrs", "comma-separated CIDRs interpreter webhooks may be called at although the default policy denies them "+
		"(loopback, link-local, cloud metadata), e.g. 127.0.0.0/8 for a webhook on the hub's host (repeatable)", func(v string) error {
		return addCIDRs(&cfg.WebhookAllowCIDRs, v)
	})
	fs.StringVar(&skippedNamespaces, "skipped-propagating-namespaces", strings.Join(bind.DefaultSkippedNamespaces, ","), "comma-separated regular expressions (each anchored ^…$) of namespaces whose templates are never propagated and whose Namespaces are not propagated to every cluster (Karmada's flag); empty: none")
	fs.BoolVar(&propagateNamespaces, "propagate-namespaces", true, "propagate every Namespace to every cluster unless a ClusterPropagationPolicy places it, it is default, reserved or skipped, or it is labelled namespace.karmada.io/skip-auto-propagation=true; "+
		"a template in a namespace the hub has no Namespace for gets one created on the hub. false: Namespaces go only where a ClusterPropagationPolicy sends them")
	fs.DurationVar(&cfg.WatchStallTimeout, "watch-stall-timeout", hub.DefaultWatchStallTimeout, "how long a client's Watch or WatchPlacements whose buffer is full (512 changes or 4 MiB) waits for the client to read before it is cut "+
		"RESOURCE_EXHAUSTED, to watch again from its last revision; a client that reads, however slowly, is never cut")
	fs.StringVar(&cfg.MetricsListen, "metrics-listen", "", "host:port serving /healthz, /readyz and Prometheus /metrics over HTTP; empty: off")
	proxyFlags(fs, &cfg)
	fs.StringVar(&o.pprofAddr, "pprof-addr", "", "host:port serving Go's profiles (net/http/pprof, /debug/pprof/) over plain HTTP, for profiling; empty: off. Anyone who reaches it can read the hub's memory profile: bind it to 127.0.0.1")
	fs.StringVar(&logOpts.Format, "log-format", logging.FormatText, "log format: text or json")
	fs.StringVar(&logOpts.Level, "log-level", "info", "log level: trace, debug, info, warn, error or off")
	o.gc.Register(fs, defaultGCPercent)
	fs.BoolVar(&showVersion, "version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: tether-hub --data-dir DIR [--listen HOST:PORT] [--etcd-endpoints URLS] [flags]\n"+
			"       tether-hub mint-agent --help\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, logOpts, err
	}
	if showVersion {
		fmt.Fprintln(stdout, version.String("tether-hub"))
		return cfg, logOpts, errVersion
	}
	if fs.NArg() > 0 {
		return cfg, logOpts, fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	cfg.EtcdEndpoints = splitList(endpoints)
	cfg.SkippedPropagatingNamespaces = append([]string{}, splitList(skippedNamespaces)...) // empty, not nil: skip none
	cfg.NoNamespacePropagation = !propagateNamespaces
	if len(cfg.EtcdEndpoints) == 0 && (cfg.EtcdTLS != store.TLS{}) {
		return cfg, logOpts, errors.New("--etcd-cafile, --etcd-certfile and --etcd-keyfile need --etcd-endpoints: the embedded etcd is local and plaintext")
	}
	quota, err := resource.ParseQuantity(embeddedQuota)
	if err != nil || quota.Sign() <= 0 {
		return cfg, logOpts, fmt.Errorf("--embedded-etcd-quota %q: want a positive quantity such as 8Gi", embeddedQuota)
	}
	cfg.EmbeddedQuotaBytes = quota.Value()
	q, err := resource.ParseQuantity(maxObject)
	if err != nil || q.Sign() <= 0 {
		return cfg, logOpts, fmt.Errorf("--max-object-bytes %q: want a positive quantity such as 1.5Mi", maxObject)
	}
	cfg.MaxObjectBytes = int(q.Value())
	cfg.Version = version.Version
	if cfg.DataDir == "" {
		return cfg, logOpts, errors.New("--data-dir is required")
	}
	return cfg, logOpts, nil
}

// addCIDRs appends the comma-separated CIDRs of v to list.
func addCIDRs(list *[]netip.Prefix, v string) error {
	for _, item := range splitList(v) {
		p, err := netip.ParsePrefix(item)
		if err != nil {
			return fmt.Errorf("CIDR %q: %w", item, err)
		}
		*list = append(*list, p.Masked())
	}
	return nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
