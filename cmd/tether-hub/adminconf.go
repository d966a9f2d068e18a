package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tetherproj/tether/hub"
)

const adminConfUsage = `Usage: tether-hub admin-conf --data-dir DIR

Prints DIR/admin.conf, the admin client configuration the hub writes into its
data directory (TETHER_CONFIG for tetherctl). The hub's image has no shell and
no cat, so this is how an operator reads it from a running hub:

  kubectl -n tether-system exec tether-hub-0 -- /usr/local/bin/tether-hub admin-conf --data-dir /var/lib/tether > tether.conf

It only reads the file: it can run while the hub runs.

Flags:
`

// adminConfCmd is the admin-conf subcommand.
func adminConfCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tether-hub admin-conf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "", "the hub's data directory, holding admin.conf (required)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), adminConfUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *dataDir == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "tether-hub admin-conf: want --data-dir DIR and no arguments")
		return 2
	}
	data, err := os.ReadFile(filepath.Join(*dataDir, hub.AdminConfFile))
	if err != nil {
		fmt.Fprintf(stderr, "tether-hub admin-conf: read admin.conf: %v (the hub writes it on its first start)\n", err)
		return 1
	}
	if _, err := stdout.Write(data); err != nil {
		fmt.Fprintf(stderr, "tether-hub admin-conf: write: %v\n", err)
		return 1
	}
	return 0
}
