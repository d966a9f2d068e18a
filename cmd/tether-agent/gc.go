package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/api/resource"
)

// defaultGCPercent is the agent's garbage collection target (Go's GOGC)
// unless --gc-percent or $GOGC sets one: a collection starts once the heap
// has grown by 50% of what the last one left live. Go's default is 100.
// The agent's live heap is small (some 3–6 MB with 100 works) and its
// resident peaks follow short bursts (a rollout's watch events, status
// reports, a heartbeat) that set the next goal; 50 lowers the heap's part
// of the peak by a quarter for some twice as many collections, each well
// under a millisecond of the agent's CPU at this heap size (issue 16).
const defaultGCPercent = 50

// gcOptions are --gc-percent and --memory-limit.
type gcOptions struct {
	percent int
	// limit is a quantity ("48Mi"); empty: $GOMEMLIMIT, else none.
	limit string
}

func (o *gcOptions) register(fs *flag.FlagSet) {
	fs.IntVar(&o.percent, "gc-percent", defaultGCPercent, "Go's garbage collection target, as $GOGC: the heap may grow by this percentage of the live heap "+
		"before a collection; lower uses less memory and more CPU; -1 turns collection off (then set --memory-limit). "+
		"Unset, $GOGC applies when it is set")
	fs.StringVar(&o.limit, "memory-limit", "", "soft limit of the memory the Go runtime manages (heap, stacks; not the binary's pages), a quantity such as 48Mi, as $GOMEMLIMIT: "+
		"collections run more often near it. A complement to --gc-percent, e.g. some 80% of the container's memory limit; "+
		"never below what the agent needs, or collection runs continuously (up to half a CPU). Empty: $GOMEMLIMIT, else none")
}

// apply sets the runtime's GC target and soft memory limit. set says which
// flags the command line gave: an unset --gc-percent leaves a $GOGC the
// runtime already applied.
func (o *gcOptions) apply(set map[string]bool) error {
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
