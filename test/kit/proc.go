package kit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// stopGrace is how long a process may take to exit after SIGTERM before its
// process group gets SIGKILL. The kit's processes hold only throwaway test
// state, so there is nothing worth waiting long for.
const stopGrace = 3 * time.Second

// logTailLines is how many lines of a process's log an error quotes.
const logTailLines = 25

// errStopped is returned when a process is started after Stop.
var errStopped = errors.New("kit: environment stopped")

// spawner starts child processes from one goroutine locked to its OS thread.
//
// The kernel delivers a child's parent-death signal (SysProcAttr.Pdeathsig)
// when the *thread* that forked it exits, not the process (see the caveat in
// package syscall). Go may start processes from any thread and may retire a
// thread at any time, which would kill children early. Forking from a thread
// that lives exactly as long as the spawner fixes that: the thread survives
// until close, and since run returns without unlocking, the runtime then
// destroys the thread, so anything still alive gets SIGKILL. If the test binary
// dies instead (panic, os.Exit, SIGKILL), the thread dies with it.
type spawner struct {
	reqs chan spawnReq
	done chan struct{} // closed when run has returned
}

type spawnReq struct {
	cmd  *exec.Cmd
	errc chan error
}

func startSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnReq), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *spawner) run() {
	runtime.LockOSThread() // never unlocked: see the type's comment.
	defer close(s.done)
	for r := range s.reqs {
		r.errc <- r.cmd.Start()
	}
}

// start starts cmd on the spawner's thread. It must not be called during or
// after close (Env guarantees that with its stopped flag).
func (s *spawner) start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	s.reqs <- spawnReq{cmd: cmd, errc: errc}
	return <-errc
}

// close stops the spawner and waits for its goroutine (and thread) to end.
func (s *spawner) close() {
	close(s.reqs)
	<-s.done
}

// process is one running child: a component of a cluster, or etcd.
type process struct {
	cluster   string // "" for the shared etcd
	component string // binary name, e.g. "kube-apiserver"
	logPath   string
	cmd       *exec.Cmd
	done      chan struct{} // closed when the process has exited and been reaped
	waitErr   error         // cmd.Wait's result; read only after done is closed

	stopRequested atomic.Bool // set by stop, so the exit is not reported as a failure
}

// name is how errors and logs refer to the process.
func (p *process) name() string {
	if p.cluster == "" {
		return p.component
	}
	return p.cluster + "/" + p.component
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes a process that ended when it should be running, with the
// tail of its log.
func (p *process) exitError() error {
	return fmt.Errorf("%s (pid %d) exited: %v\n--- last lines of %s ---\n%s",
		p.name(), p.pid(), p.waitErr, p.logPath, p.logTail(logTailLines))
}

// stop ends the process's whole group: SIGTERM, then SIGKILL if it has not
// exited within grace (at once if grace is 0), and waits until it has been
// reaped.
func (p *process) stop(grace time.Duration) {
	p.stopRequested.Store(true)
	pgid := p.pid() // Setpgid with Pgid 0 makes the child a group leader.
	if grace > 0 && !p.exited() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	// Also after a clean exit: anything the process forked into its group
	// must go too. ESRCH (group already empty) is the normal outcome.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
}

// logTail returns the last n lines of the process's log file.
func (p *process) logTail(n int) string {
	return fileTail(p.logPath, n)
}

// fileTail returns the last n lines of a file, or a note saying why it could
// not be read.
func fileTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	b = bytes.TrimRight(b, "\n")
	lines := strings.Split(string(b), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
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

// newCmd prepares a child process: output to logPath, its own process group,
// SIGKILL when the spawner's thread dies.
func newCmd(bin string, args []string, env []string, logFile *os.File) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,
		Pdeathsig: syscall.SIGKILL,
	}
	return cmd
}
