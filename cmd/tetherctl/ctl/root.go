// Package ctl is tetherctl's command tree: one file per command, each a
// function that builds a *cobra.Command. An online command is a printer
// over the public client: it dials one client.Client (client.go) and
// prints what its typed calls return, so paging, watch resume and the
// codes retried on (client.Retryable) are the client's. Commands write
// results to the writers they are given (never to os.Stdout directly) so
// tests can run them in-process; Run maps errors to exit codes in one
// place.
package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tetherproj/tether/internal/version"
)

// IO is where a command reads and writes.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// exitError carries a specific exit code; commands that print their own
// error report (like `interpret -o json`) return it to skip Run's message.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Run executes tetherctl with args and returns the process exit code.
func Run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) int {
	root := newRoot(IO{In: in, Out: out, Err: errOut})
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintf(errOut, "error: %v\n", err)
		return 1
	}
}

func newRoot(s IO) *cobra.Command {
	root := &cobra.Command{
		Use:           "tetherctl",
		Short:         "tetherctl talks to a Tether hub and runs its logic offline",
		Version:       version.String("tetherctl"),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetVersionTemplate("{{.Version}}\n")
	for _, add := range commands {
		root.AddCommand(add(s))
	}
	for _, hook := range rootHooks {
		hook(root, s)
	}
	return root
}

// commands lists the constructors of tetherctl's subcommands; each command's
// file adds itself here in an init function, so adding one touches one file.
var commands []func(IO) *cobra.Command

// rootHooks adjust the assembled tree once every command is added: root
// persistent flags (client.go) and forms that extend another file's command.
var rootHooks []func(*cobra.Command, IO)
