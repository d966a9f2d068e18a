package e2e

import (
	"bytes"
	"os"
	"testing"
	"time"

	testproc "github.com/tetherproj/tether/test/proc"
)

// stopGrace is how long a process may take to stop after SIGTERM before it
// is killed; the hub's own shutdown grace is 10 s.
const stopGrace = 20 * time.Second

// proc is one child process (test/proc), its combined output in a log file.
type proc struct {
	*testproc.Process
	owner testing.TB // the test whose end stops the process
	name  string
}

// startProc starts bin with args, its output to a new file in a temporary
// directory of owner. It is stopped (SIGTERM, then SIGKILL) when owner
// ends, which may be a parent of t (a process that outlives a subtest); if
// owner failed, the end of its log is printed. Start-up errors fail t.
func startProc(t, owner testing.TB, name, bin string, args ...string) *proc {
	t.Helper()
	logf, err := os.CreateTemp(owner.TempDir(), name+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	logf.Close() // the child appends to it
	p, err := testproc.Start(procs, testproc.Config{Name: name, Bin: bin, Args: args, LogPath: logf.Name()})
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	testproc.StopAtEnd(owner, p, stopGrace)
	return &proc{Process: p, owner: owner, name: name}
}

// pid is the process id.
func (p *proc) pid() int { return p.PID() }

// exited reports whether the process has exited.
func (p *proc) exited() bool { return p.Exited() }

// stop stops the process gracefully, with SIGKILL (and an error of its
// owner) if it takes longer than stopGrace, and waits for it. Stopping a
// stopped process does nothing.
func (p *proc) stop() {
	if !p.Stop(stopGrace) {
		p.owner.Errorf("%s did not stop within %s of SIGTERM; killed", p.name, stopGrace)
	}
}

// kill9 kills the process group with SIGKILL and waits for the process.
func (p *proc) kill9() { p.Stop(0) }

// logText is the log so far.
func (p *proc) logText() string {
	data, _ := os.ReadFile(p.LogPath())
	return string(data)
}

// count is how many times s occurs in the log so far.
func (p *proc) count(s string) int {
	data, _ := os.ReadFile(p.LogPath())
	return bytes.Count(data, []byte(s))
}

// tail is the last n lines of the log.
func (p *proc) tail(n int) string { return testproc.FileTail(p.LogPath(), n) }
