// Command tether-agent runs in a member cluster: it opens one outbound
// stream to the hub, applies the works it receives, reports their status
// and keeps the cluster in shape while the hub is away. Flags → agent.Config
// → agent.New → Run; `tether-agent --help` lists the flags.
//
// # Memory
//
// The process sets Go's garbage collection target to 50 (--gc-percent,
// defaultGCPercent; $GOGC when set and the flag is not) rather than Go's
// 100, and no soft memory limit unless --memory-limit or $GOMEMLIMIT sets
// one (gc.go). With 100 works (issue 16's baseline workload on one member)
// the agent peaks at some 39 MB resident, of which some 25 MB are the
// binary's own pages; TestLeanDependencies keeps client-go's typed
// clientset out of the binary. --pprof-addr serves Go's profiles
// (pprof.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/tetherproj/tether/agent"
	"github.com/tetherproj/tether/internal/gcflags"
	"github.com/tetherproj/tether/internal/hubaddr"
	"github.com/tetherproj/tether/internal/logging"
	"github.com/tetherproj/tether/internal/pprofserve"
	"github.com/tetherproj/tether/internal/version"
)

const binary = "tether-agent"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", binary, err)
		return 2
	}
	if o.showVersion {
		fmt.Fprintln(stdout, version.String(binary))
		return 0
	}
	if err := o.gc.Apply(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", binary, err)
		return 2
	}
	cfg := o.agent
	logger, err := logging.New(o.log)
	if err != nil {
		fmt.Fprintf(stderr, "%s: -log-format, -log-level: %v\n", binary, err)
		return 2
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", binary, err)
		return 2
	}
	if o.pprofAddr != "" {
		runtime.MemProfileRate = pprofMemProfileRate
		stop, err := pprofserve.Serve(o.pprofAddr, logger.Named("pprof"))
		if err != nil {
			fmt.Fprintf(stderr, "%s: --pprof-addr: %v\n", binary, err)
			return 2
		}
		defer stop()
	}
	a, err := agent.New(cfg, logger)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", binary, err)
		return 1
	}
	if err := a.Run(ctx); err != nil {
		logger.Error("agent stopped", "error", err)
		return 1
	}
	return 0
}

// options is the command line: the agent's config and the process's own
// settings.
type options struct {
	agent agent.Config
	log   logging.Options
	// pprofAddr serves net/http/pprof when set (pprof.go).
	pprofAddr   string
	gc          gcflags.Options
	showVersion bool
}

// parse reads the flags into the agent's config, the logging options and
// the process's own settings.
func parse(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet(binary, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := options{log: logging.Options{Name: binary}}
	cfg, opts := &o.agent, &o.log
	hub := fs.String("hub", "", "the hub's address, host:port (required); for several hub replicas without a load balancer, "+
		"each replica's address separated by commas (host1:port1,host2:port2): the agent streams to one, in an order shuffled per agent, "+
		"and moves to the next when it goes")
	fs.StringVar(&cfg.CertFile, "cert", "", "the agent's client certificate, PEM (without --token)")
	fs.StringVar(&cfg.KeyFile, "key", "", "the client certificate's private key, PEM")
	fs.StringVar(&cfg.CAFile, "ca", "", "the hub CA certificate(s), PEM")
	fs.StringVar(&cfg.Token, "token", "", "bootstrap token to register with, from `tetherctl token create` (with --ca-hash and --cluster; replaces --cert, --key, --ca)")
	fs.StringVar(&cfg.CAHash, "ca-hash", "", "the hub CA's pin, sha256:<hex>, checked before anything is sent to the hub")
	fs.StringVar(&cfg.ClusterName, "cluster", "", "the cluster name to register; it becomes the certificate's identity")
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig of the member cluster; empty: in-cluster configuration")
	fs.StringVar(&cfg.DataDir, "data-dir", "", "directory of the agent's local state and registered credentials (required)")
	fs.StringVar(&cfg.StateSecret, "state-secret", "", "NAMESPACE/NAME of a member-cluster Secret to keep the state in "+
		"(works held, hub identity, status digests; at most 1 MiB) instead of --data-dir, which still holds the credentials")
	fs.DurationVar(&cfg.EvictionGrace, "eviction-grace", agent.DefaultEvictionGrace,
		"how long works no hub claims are kept before their objects are deleted; 0 keeps them")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "host:port to serve Prometheus metrics on /metrics (stream state, works held, applies, deletions, status lag; objects deleted and orphaned in the member, by reason; requests to the member, by verb and resource); empty: none")
	fs.StringVar(&cfg.HealthAddr, "health-addr", "", "host:port to serve /healthz (the agent's loops go on) and /readyz (synced with the hub since the start, member API server ready) "+
		"for probes; may equal --metrics-addr; empty: none (the charts and deploy/agent set :8081)")
	fs.StringVar(&cfg.MemberProxy, "member-proxy", "full", "what the hub's users may do in this cluster through the hub's member proxy, "+
		"as impersonated tether:<user> identities that this cluster's RBAC authorizes: full, read-only (get, list, watch, logs; no exec, "+
		"attach, port-forward or writes) or off (the agent opens no tunnel)")
	topo := topologyFlags(fs)
	interpreterFlags(fs, cfg)
	fs.StringVar(&opts.Format, "log-format", logging.FormatText, "log format: text or json")
	fs.StringVar(&opts.Level, "log-level", "info", "log level: trace, debug, info, warn, error or off")
	fs.StringVar(&o.pprofAddr, "pprof-addr", "", "host:port to serve Go's profiles on /debug/pprof/ (plain HTTP that exposes the agent's memory: bind it to 127.0.0.1); empty: none")
	o.gc.Register(fs, defaultGCPercent)
	fs.BoolVar(&o.showVersion, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q: every option is a flag", fs.Arg(0))
	}
	cfg.HubAddrs = hubaddr.Split(*hub)
	var err error
	if cfg.Topology, err = topo(); err != nil {
		return o, err
	}
	return o, nil
}
