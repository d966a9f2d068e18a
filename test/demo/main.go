// Command tether-demo is `make demo`: three member clusters from the test
// kit with different regions and capacity, a hub on a fixed port, an agent
// per cluster, and examples/ applied; it waits until nginx is rolled out
// across the members, prints where everything runs, and stays up until
// Ctrl-C (SIGINT) or SIGTERM, which stops every process it started.
//
//	tether-demo [-dir .demo] [-listen 127.0.0.1:7443] [-examples examples] [-bin bin]
//
// Its state has fixed paths, which tools rely on (issue 7):
//
//	.demo/tether.conf                  admin client config (TETHER_CONFIG)
//	.demo/clusters/NAME/kubeconfig     each member's admin kubeconfig
//	.demo/pids                         "ROLE NAME PID" per process it started:
//	                                   hub, agent NAME, cluster NAME (every kit
//	                                   process of the cluster; the etcd the kit
//	                                   shares between clusters is "cluster kit-etcd")
//
// plus .demo/demo.pid (this process), .demo/hub.log, .demo/hub/ (the hub's
// data directory) and .demo/agents/NAME/ (certificate, state, agent.log).
// Every run starts afresh: it refuses to start while another demo runs on
// the same directory, stops processes an earlier demo left behind, and
// wipes the directory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/fleet"
)

// config is the command line.
type config struct {
	dir       string        // state directory (fixed by issue 7: .demo)
	listen    string        // the hub's --listen
	examples  string        // directory of the YAML to apply
	bin       string        // tether-hub and tether-agent
	readyWait time.Duration // how long nginx may take to roll out
	startedAt time.Time     // when `make demo` started, for the build-included time
}

// nginx is the template whose rollout the demo waits for.
var nginx = &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tether-demo:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tether-demo:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("tether-demo", flag.ContinueOnError)
	var cfg config
	var startedAt string
	fs.StringVar(&cfg.dir, "dir", ".demo", "state directory; tools expect .demo")
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:7443", "the hub's address (the printed commands use it through .demo/tether.conf)")
	fs.StringVar(&cfg.examples, "examples", "examples", "directory whose *.yaml files are applied")
	fs.StringVar(&cfg.bin, "bin", "bin", "directory of tether-hub and tether-agent (make build)")
	fs.DurationVar(&cfg.readyWait, "ready-timeout", 5*time.Minute, "how long nginx may take to roll out once applied")
	fs.StringVar(&startedAt, "started-at", "", "Unix time in nanoseconds when make demo started (the build is then included in the time to ready)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if startedAt != "" {
		ns, err := strconv.ParseInt(startedAt, 10, 64)
		if err != nil {
			return cfg, fmt.Errorf("-started-at %q: want Unix nanoseconds: %v", startedAt, err)
		}
		cfg.startedAt = time.Unix(0, ns)
	}
	return cfg, nil
}

// run is the demo: fresh state, fleet, examples, ready table, then wait for
// the end.
func run(ctx context.Context, cfg config, out io.Writer) error {
	begin := time.Now()
	logger := hclog.New(&hclog.LoggerOptions{Name: "demo", Level: hclog.Info, Output: os.Stderr, TimeFormat: "15:04:05.000"})
	st, err := prepareState(cfg.dir, cfg.listen, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, ">> starting 3 member clusters, the hub on %s and 3 agents (state in %s)\n", cfg.listen, cfg.dir)
	f, err := fleet.Start(ctx, fleet.Options{
		Clusters:  members(),
		Dir:       st.dir,
		HubListen: cfg.listen,
		BinDir:    cfg.bin,
		Prepare:   installCRDs,
		Logger:    logger,
	})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(out, ">> interrupted during start-up; everything started is stopped")
			return nil
		}
		return err
	}
	defer func() {
		fmt.Fprintln(out, "\n>> stopping every process of the demo")
		f.Stop()
		fmt.Fprintf(out, ">> stopped; logs stay in %s\n", cfg.dir)
	}()
	if err := st.record(f); err != nil {
		return err
	}
	c, err := f.Client()
	if err != nil {
		return err
	}
	defer c.Close()

	fmt.Fprintf(out, ">> fleet up in %s (agents registered with %s); applying %s/\n",
		time.Since(begin).Round(time.Millisecond), registration(f.Registration), cfg.examples)
	applied, err := applyExamples(ctx, c, cfg.examples, out)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, ">> waiting until nginx's aggregated readyReplicas equals its replicas")
	waitCtx, cancel := context.WithTimeout(ctx, cfg.readyWait)
	err = c.WaitTemplate(waitCtx, nginx, fleet.Rolled)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			printTable(ctx, out, c, f, applied)
			return fmt.Errorf("%w\n(logs: %s/hub.log, %s/agents/*/agent.log)", err, cfg.dir, cfg.dir)
		}
		return nil // interrupted
	}
	ready := time.Now()
	printTable(ctx, out, c, f, applied)
	printTimes(out, begin, cfg.startedAt, ready)
	printNext(out, cfg.dir, f)
	return watch(ctx, f)
}

// watchInterval is how often the demo checks that its hub and agents are
// still running while it waits for Ctrl-C.
const watchInterval = 2 * time.Second

// watch waits for the end of ctx (Ctrl-C), failing early if the hub or an
// agent died.
func watch(ctx context.Context, f *fleet.Fleet) error {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := f.Exited(); err != nil {
				return err
			}
		}
	}
}

func registration(r fleet.Registration) string {
	if r == fleet.RegisterToken {
		return "bootstrap tokens"
	}
	return "certificates from tether-hub mint-agent: the hub serves no bootstrap tokens yet"
}

// printTimes reports the time to the ready table.
func printTimes(out io.Writer, begin, startedAt, ready time.Time) {
	fmt.Fprintf(out, "\nReady in %s after the demo started", ready.Sub(begin).Round(100*time.Millisecond))
	if !startedAt.IsZero() {
		fmt.Fprintf(out, ", %s after `make demo` started (build included)", ready.Sub(startedAt).Round(100*time.Millisecond))
	}
	fmt.Fprintln(out, ".")
}
