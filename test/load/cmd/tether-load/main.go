// Command tether-load is Tether's load tool (package test/load): N
// simulated agents, in worker processes, against a real tether-hub.
//
//	tether-load run --agents 10000 --workers 8 --dir .load --scenarios idle,fanout,restart
//	tether-load worker ...   (started by run, one per worker process)
//
// run prints the figures and writes results.json and the plots into
// --dir.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/test/load"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: tether-load run|worker [flags] (see tether-load run --help)")
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = runDriver(ctx, args[1:], stdout, stderr)
	case "worker":
		err = runWorker(ctx, args[1:], stderr)
	default:
		err = fmt.Errorf("unknown subcommand %q: want run or worker", args[0])
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "tether-load: %v\n", err)
		return 1
	}
	return 0
}

func runDriver(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tether-load run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	self, _ := os.Executable()
	cfg := load.Config{LoadBin: self}
	var scenarios, hubArgs string
	fs.StringVar(&cfg.Dir, "dir", ".load", "output directory: the hub's data, logs, results.json and the plots")
	fs.StringVar(&cfg.HubBin, "hub-bin", filepath.Join(filepath.Dir(self), "tether-hub"), "the tether-hub binary")
	fs.IntVar(&cfg.Agents, "agents", 100, "simulated agents")
	fs.IntVar(&cfg.Workers, "workers", 4, "worker processes hosting them")
	fs.StringVar(&cfg.Enroll, "enroll", load.EnrollMint, "how agents get certificates: mint (signed with the hub CA's key) or token (Register with a bootstrap token, at most 10 a second)")
	fs.DurationVar(&cfg.Ramp, "ramp", 10*time.Second, "spread of the agents' first connects")
	fs.StringVar(&scenarios, "scenarios", strings.Join(load.Scenarios, ","), "comma-separated scenarios to run in order: "+strings.Join(load.Scenarios, ", "))
	fs.IntVar(&cfg.WorksPerAgent, "works", 100, "templates of scenario works, each Duplicated to every agent")
	fs.DurationVar(&cfg.Idle, "idle", 30*time.Second, "how long scenario idle measures")
	fs.DurationVar(&cfg.Timeout, "timeout", 5*time.Minute, "bound of each wait (all synced, all acked)")
	fs.DurationVar(&cfg.StormJitter, "storm-jitter", 10*time.Second, "spread of scenario storm's reconnects")
	fs.DurationVar(&cfg.Flap, "flap", 30*time.Second, "duration of scenario flap")
	fs.Float64Var(&cfg.FlapFraction, "flap-fraction", 0.01, "fraction of the agents that flap")
	fs.DurationVar(&cfg.FlapDown, "flap-down", 2*time.Second, "how long a flapping agent stays down")
	fs.DurationVar(&cfg.FlapUp, "flap-up", 3*time.Second, "how long a flapping agent stays up")
	fs.StringVar(&hubArgs, "hub-args", "", "extra tether-hub flags, space-separated")
	fs.BoolVar(&cfg.CountKeys, "count-keys", false, "stop the hub at the end and count its etcd keys")
	fs.IntVar(&cfg.WorkerGCPercent, "worker-gc-percent", load.DefaultWorkerGCPercent, "each worker's garbage collection target (Go's GOGC)")
	fs.Int64Var(&cfg.WorkerMemoryLimit, "worker-memory-limit", 0, "each worker's soft memory limit in bytes (Go's GOMEMLIMIT); 0: half of the machine's memory shared among the workers, at most 2 GiB")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.Scenarios = strings.Split(scenarios, ",")
	cfg.HubArgs = strings.Fields(hubArgs)
	logger := hclog.New(&hclog.LoggerOptions{Name: "tether-load", Output: stderr, Level: hclog.Info})
	res, err := load.Run(ctx, cfg, logger)
	if res != nil {
		res.Print(stdout)
	}
	return err
}

func runWorker(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("tether-load worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg load.WorkerConfig
	var hubAddr, level string
	fs.StringVar(&cfg.Control, "control", "", "the driver's address")
	fs.IntVar(&cfg.Worker, "worker", 1, "this worker's number")
	fs.StringVar(&hubAddr, "hub", "", "the hub's address")
	fs.StringVar(&cfg.Enroll, "enroll", load.EnrollMint, "mint or token")
	fs.StringVar(&cfg.HubDir, "hub-dir", "", "the hub's data directory (enroll mint)")
	fs.StringVar(&cfg.Token, "token", "", "bootstrap token (enroll token)")
	fs.StringVar(&cfg.CAFile, "ca-file", "", "the hub CA (enroll token)")
	fs.IntVar(&cfg.First, "first", 0, "index of the first agent")
	fs.IntVar(&cfg.Count, "count", 1, "agents")
	fs.StringVar(&cfg.Prefix, "prefix", "load", "cluster name prefix")
	fs.DurationVar(&cfg.Ramp, "ramp", 0, "spread of the first connects")
	fs.StringVar(&level, "log-level", "warn", "log level")
	fs.IntVar(&cfg.GCPercent, "gc-percent", 0, "garbage collection target (Go's GOGC); 0: Go's")
	fs.Int64Var(&cfg.MemoryLimit, "memory-limit", 0, "soft memory limit in bytes (Go's GOMEMLIMIT); 0: none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.HubAddrs = []string{hubAddr}
	logger := hclog.New(&hclog.LoggerOptions{Name: fmt.Sprintf("worker-%d", cfg.Worker), Output: stderr, Level: hclog.LevelFromString(level)})
	return load.RunWorker(ctx, cfg, logger)
}
