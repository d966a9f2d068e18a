package proc

import (
	"testing"
	"time"
)

// FailureTailLines is how many lines of its log StopAtEnd quotes for a
// process whose test failed.
const FailureTailLines = 60

// StopAtEnd stops p when tb ends (tb.Cleanup): SIGTERM, then SIGKILL after
// grace, which is an error of tb, since a process the test did not crash
// on purpose should stop when asked. If tb failed, the tail of p's log is
// logged. A process stopped earlier (Stop) is left as it is.
func StopAtEnd(tb testing.TB, p *Process, grace time.Duration) {
	tb.Cleanup(func() {
		if !p.Stop(grace) {
			tb.Errorf("%s (pid %d) did not stop within %s of SIGTERM; killed", p.name, p.PID(), grace)
		}
		if tb.Failed() {
			tb.Logf("--- last lines of %s (%s) ---\n%s", p.name, p.logPath, FileTail(p.logPath, FailureTailLines))
		}
	})
}
