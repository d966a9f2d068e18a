// Package gcflags is the Go runtime's memory settings as flags of the hub
// and the agent: --gc-percent (what $GOGC sets) with each binary's own
// default, and --memory-limit (what $GOMEMLIMIT sets).
package gcflags

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Options are the flags' values.
type Options struct {
	percent percentFlag
	// limit is a quantity ("48Mi"); empty: $GOMEMLIMIT, else none.
	limit string
}

// Register adds --gc-percent, defaulting to defaultPercent, and
// --memory-limit to fs.
func (o *Options) Register(fs *flag.FlagSet, defaultPercent int) {
	o.percent.v = defaultPercent
	fs.Var(&o.percent, "gc-percent", "Go's garbage collection target, a `percent` as $GOGC: the heap may grow by this percentage of the live heap "+
		"before a collection; lower uses less memory and more CPU; -1 turns collection off (then set --memory-limit). "+
		"Unset, $GOGC applies when it is set")
	fs.StringVar(&o.limit, "memory-limit", "", "soft limit of the memory the Go runtime manages (heap, stacks; not the binary's pages), a quantity such as 48Mi, as $GOMEMLIMIT: "+
		"collections run more often near it. A complement to --gc-percent, e.g. some 90% of the container's memory limit; "+
		"never below what the process needs, or collection runs continuously. Empty: $GOMEMLIMIT, else none")
}

// Apply sets the runtime's GC target and soft memory limit. A
// --gc-percent the command line did not give leaves a $GOGC the runtime
// already applied.
func (o *Options) Apply() error {
	if o.percent.given || os.Getenv("GOGC") == "" {
		debug.SetGCPercent(o.percent.v)
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

// percentFlag is --gc-percent, and whether the command line gave it.
type percentFlag struct {
	v     int
	given bool
}

func (p *percentFlag) String() string { return strconv.Itoa(p.v) }

func (p *percentFlag) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want an integer")
	}
	p.v, p.given = v, true
	return nil
}
