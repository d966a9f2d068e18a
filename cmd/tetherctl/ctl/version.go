package ctl

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tetherproj/tether/internal/version"
)

func init() { commands = append(commands, newVersion) }

func newVersion(s IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print tetherctl's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(s.Out, version.String("tetherctl"))
			return err
		},
	}
}
