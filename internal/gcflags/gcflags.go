// Package gcflags is the Go runtime's memory settings as flags of the hub
// and the agent: --gc-percent (what $GOGC sets) with each binary's own
// default, and --memory-limit (what $GOMEMLIMIT sets).
package gcflags

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Options are the flags' values.
type Options struct {
	percent int
	// limit is a quantity ("48Mi"); empty: $GOMEMLIMIT, else none.
	limit string
}

// Register adds --gc-percent, defaulting to defaultPercent, and
// --memory-limit to fs.
func (o *Options) Register(fs *flag.FlagSet, defaultPercent int) {
	fs.IntVar(&o.percent, "gc-percent", defaultPercent, "Go's garbage collection target, as $GOGC: the heap may grow by this percentage of the live heap "+
		"before a collection; lower uses less memory and more CPU; -1 turns collection off (then set --memory-limit). "+
		"Unset, $GOGC applies when it is set")
	fs.StringVar(&o.limit, "memory-limit", "", "soft limit of the memory the Go runtime manages (heap, stacks; not the binary's pages), a quantity such as 48Mi, as $GOMEMLIMIT: "+
		"collections run more often near it. A complement to --gc-percent, e.g. some 90% of the container's memory limit; "+
		"never below what the process needs, or collection runs continuously. Empty: $GOMEMLIMIT, else none")
}

// Apply sets the runtime's GC target and soft memory limit. set says which
// flags the command line gave: an unset --gc-percent leaves a $GOGC the
// runtime already applied.
func (o *Options) Apply(set map[string]bool) error {
	if set["gc-percent"] || os.Getenv("GOGC") == "" {
		debug.SetGCPercent(o.percent)
	}
	if o.limit == "" {
		return nil
	}
	q, err := resource.ParseQuantity(o.limit)
	if err != nil || q.Sign() <= 0 {
		return fmt.Errorf("--memory-limit %q: want a positive quantity such as 48Mi", o.limit)
	}
	debug.SetMemoryLimit(q.Value())
	return nil
}
