// Command tetherctl is Tether's command-line client: `tetherctl --help` lists
// its commands. The command tree lives in internal/ctl.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// offline gives `tetherctl placement simulate` the hub's scheduler.
	_ "github.com/tetherproj/tether/hub/clientapi/offline"
	"github.com/tetherproj/tether/internal/ctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := ctl.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
