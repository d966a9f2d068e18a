package kit

import (
	"errors"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetherproj/tether/test/proc"
)

// stopGrace is how long a process may take to exit after SIGTERM before its
// process group gets SIGKILL. The kit's processes hold only throwaway test
// state, so there is nothing worth waiting long for.
const stopGrace = 3 * time.Second

// errStopped is returned when a process is started after Stop.
var errStopped = errors.New("kit: environment stopped")

// process is one running child: a component of a cluster, or etcd.
type process struct {
	*proc.Process
	cluster   string // "" for the shared etcd
	component string // binary name, e.g. "kube-apiserver"

	stopRequested atomic.Bool // set by Stop, so the exit is not reported as a failure
}

// name is how errors and logs refer to the process.
func (p *process) name() string {
	if p.cluster == "" {
		return p.component
	}
	return p.cluster + "/" + p.component
}

// Stop is proc.Process.Stop, noting first that the exit is expected.
func (p *process) Stop(grace time.Duration) {
	p.stopRequested.Store(true)
	p.Process.Stop(grace)
}

// inheritedEnvSkip lists prefixes of environment variables that children do
// not inherit: etcd reads ETCD_* as flags, kwok reads KWOK_*, and a
// developer's own settings must not change the kit's clusters.
var inheritedEnvSkip = []string{"ETCD_", "KWOK_"}

// childEnv returns the environment for a child: this process's, without
// inheritedEnvSkip, plus extra (which wins).
func childEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !slices.ContainsFunc(inheritedEnvSkip, func(p string) bool { return strings.HasPrefix(kv, p) }) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}
