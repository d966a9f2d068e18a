// Command tetherctl is Tether's command-line client: `tetherctl --help` lists
// its commands. The command tree lives in cmd/tetherctl/ctl.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tetherproj/tether/cmd/tetherctl/ctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := ctl.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
