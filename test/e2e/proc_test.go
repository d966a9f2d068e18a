package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopGrace is how long a process may take to stop after SIGTERM before it
// is killed; the hub's own shutdown grace is 10 s.
const stopGrace = 20 * time.Second

// spawner starts processes from one goroutine locked to its OS thread:
// Pdeathsig fires when the thread that started the child ends, so a child
// started from an ordinary goroutine could be killed when the Go runtime
// retires that thread.
type spawner struct {
	reqs chan spawnReq
	done chan struct{}
}

type spawnReq struct {
	cmd *exec.Cmd
	err chan error
}

func startSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnReq), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		for r := range s.reqs {
			r.err <- r.cmd.Start()
		}
	}()
	return s
}

func (s *spawner) start(cmd *exec.Cmd) error {
	r := spawnReq{cmd: cmd, err: make(chan error, 1)}
	s.reqs <- r
	return <-r.err
}

// close ends the spawner's goroutine; call it only after every process it
// started has been reaped.
func (s *spawner) close() {
	close(s.reqs)
	<-s.done
}

// proc is one child process, its combined output in a log file.
type proc struct {
	owner testing.TB // the test whose end stops the process
	name  string
	cmd   *exec.Cmd
	log   string        // the log file's path
	done  chan struct{} // closed once the process has exited and been reaped
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
	p := &proc{owner: owner, name: name, cmd: exec.Command(bin, args...), log: logf.Name(), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := procs.start(p.cmd); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	owner.Cleanup(func() {
		p.stop()
		if owner.Failed() {
			owner.Logf("--- last lines of %s (%s) ---\n%s", name, p.log, p.tail(60))
		}
	})
	return p
}

// pid is the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has exited.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop stops the process gracefully, with SIGKILL if it takes longer than
// stopGrace, and waits for it. Stopping a stopped process does nothing.
func (p *proc) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		p.owner.Errorf("%s did not stop within %s of SIGTERM; killing it", p.name, stopGrace)
		p.kill9()
	}
}

// kill9 kills the process group with SIGKILL and waits for the process.
func (p *proc) kill9() {
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	<-p.done
}

// logText is the log so far.
func (p *proc) logText() string {
	data, _ := os.ReadFile(p.log)
	return string(data)
}

// count is how many times s occurs in the log so far.
func (p *proc) count(s string) int {
	data, _ := os.ReadFile(p.log)
	return bytes.Count(data, []byte(s))
}

// tail is the last n lines of the log.
func (p *proc) tail(n int) string {
	lines := strings.Split(strings.TrimRight(p.logText(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
