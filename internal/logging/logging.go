// Package logging builds the go-hclog loggers that Tether's processes hand to
// their components. There is no global logger: cmd/ builds one root logger
// with New and every constructor below it receives a Named child.
//
// It imports only go-hclog and the standard library.
package logging

import (
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// Formats accepted by New.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Options configures the root logger of a process.
type Options struct {
	// Name is the process name, e.g. "tether-hub".
	Name string
	// Format is FormatText (default) or FormatJSON.
	Format string
	// Level is one of trace, debug, info (default), warn, error, off.
	Level string
	// Output defaults to standard error.
	Output io.Writer
}

// New returns the root logger for opts, or an error naming the bad option.
func New(opts Options) (hclog.Logger, error) {
	format := strings.ToLower(opts.Format)
	if format == "" {
		format = FormatText
	}
	if format != FormatText && format != FormatJSON {
		return nil, fmt.Errorf("logging: format %q: want %q or %q", opts.Format, FormatText, FormatJSON)
	}
	level := hclog.Info
	if opts.Level != "" {
		level = hclog.LevelFromString(opts.Level)
		if level == hclog.NoLevel {
			return nil, fmt.Errorf("logging: level %q: want trace, debug, info, warn, error or off", opts.Level)
		}
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:            opts.Name,
		Level:           level,
		Output:          opts.Output,
		JSONFormat:      format == FormatJSON,
		IncludeLocation: false,
		TimeFormat:      "2006-01-02T15:04:05.000Z07:00",
	}), nil
}
