// Command client is an example program using the Tether client package: it
// dials a hub with a credentials file, applies a ConfigMap, waits until the
// scheduler placed it, and prints where it runs and why other clusters
// were rejected. The ConfigMap is placed by whatever PropagationPolicy
// selects it.
//
//	go run ./examples/client --config DATA_DIR/admin.conf --name settings
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

func main() {
	config := flag.String("config", "", "credentials file (default $TETHER_CONFIG, then ~/.tether/config)")
	namespace := flag.String("namespace", "default", "the ConfigMap's namespace")
	name := flag.String("name", "example", "the ConfigMap's name")
	timeout := flag.Duration("timeout", time.Minute, "how long to wait for the placement")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *config, *namespace, *name); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, config, namespace, name string) error {
	path, err := client.ConfigPath(config)
	if err != nil {
		return err
	}
	cfg, err := client.LoadConfig(path)
	if err != nil {
		return err
	}
	c, err := client.Dial(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close()

	manifest := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: hello}\n", name, namespace)
	resp, err := c.Apply(ctx, []byte(manifest))
	if err != nil {
		return err
	}
	for _, r := range resp.GetResults() {
		outcome := strings.ToLower(strings.TrimPrefix(r.GetOutcome().String(), "APPLY_OUTCOME_"))
		fmt.Printf("%s %s\n", client.RefString(r.GetRef()), outcome)
	}

	ref := &hubv1.ObjectRef{ApiVersion: "v1", Kind: "ConfigMap", Namespace: namespace, Name: name}
	pl, err := c.WaitPlaced(ctx, ref)
	if err != nil {
		return err
	}
	for _, cl := range pl.GetClusters() {
		fmt.Printf("runs on %s\n", cl.GetCluster())
	}
	for _, rej := range pl.GetRejections() {
		fmt.Printf("not on %s: %s\n", rej.GetCluster(), strings.Join(rej.GetReasons(), "; "))
	}
	return nil
}
