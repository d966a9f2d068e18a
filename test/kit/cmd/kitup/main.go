// Command kitup starts member clusters with the test kit for manual use,
// prints how to reach them, and tears everything down on Ctrl-C (SIGINT) or
// SIGTERM. `make kit-up` builds and runs it.
//
//	kitup -n 3 [-dir DIR] [-nodes 2]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/test/kit"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kitup:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		n       = flag.Int("n", 3, "number of member clusters")
		nodes   = flag.Int("nodes", 1, "kwok nodes per cluster")
		dir     = flag.String("dir", "", "directory for data, kubeconfigs and logs (default: a temporary directory, removed on exit)")
		bin     = flag.String("bin", "", "directory of the binaries (default: $"+kit.BinEnv+" or <repo>/test/.cache/bin)")
		verbose = flag.Bool("v", false, "log the kit's debug messages")
	)
	flag.Parse()
	logger := hclog.New(&hclog.LoggerOptions{Name: "kitup", Level: hclog.Info})
	if *verbose {
		logger.SetLevel(hclog.Debug)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	specs := kit.Members(*n)
	for i := range specs {
		specs[i].Nodes = nil
		for j := range *nodes {
			node := kit.DefaultNode
			node.Name = fmt.Sprintf("node-%d", j+1)
			specs[i].Nodes = append(specs[i].Nodes, node)
		}
	}

	begin := time.Now()
	env, err := kit.Start(ctx, kit.Options{Clusters: specs, Dir: *dir, Logger: logger, BinDir: *bin})
	if err != nil {
		return err
	}
	defer env.Stop()

	fmt.Printf("\n%d clusters ready in %s (data and logs in %s)\n\n", len(env.Clusters), time.Since(begin).Round(time.Millisecond), env.Dir)
	var paths []string
	for _, c := range env.Clusters {
		fmt.Printf("  %-10s %s  kubeconfig %s\n", c.Name, c.Server, c.KubeconfigPath)
		paths = append(paths, c.KubeconfigPath)
	}
	fmt.Printf("\nexport KUBECONFIG=%s\n", strings.Join(paths, ":"))
	fmt.Printf("kubectl --context %s get nodes\n\nPress Ctrl-C to stop.\n", env.Clusters[0].Name)

	<-ctx.Done()
	fmt.Println("\nstopping...")
	return nil
}
