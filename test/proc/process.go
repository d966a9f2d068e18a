package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// TailLines is how many lines of a process's log ExitError quotes.
const TailLines = 25

// Config says how to start a process.
type Config struct {
	// Name is how ExitError refers to the process, e.g. "c1/kube-apiserver".
	Name string
	Bin  string
	Args []string
	// Env is the child's environment; nil means this process's.
	Env []string
	// LogPath receives the child's stdout and stderr, appended to, so a
	// restarted child keeps its history.
	LogPath string
	// OnExit, if set, is called with the child's pid and cmd.Wait's result
	// once it has been reaped, before Done is closed: nothing it does
	// happens after Stop has returned.
	OnExit func(pid int, err error)
}

// Process is one running child, in its own process group, which gets
// SIGKILL when its Spawner's thread ends.
type Process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited and been reaped
	waitErr error         // cmd.Wait's result; read only after done is closed
}

// Start starts c.Bin on sp's thread, and a goroutine that reaps it (it ends
// when the process does; Stop makes sure it does).
func Start(sp *Spawner, c Config) (*Process, error) {
	logFile, err := os.OpenFile(c.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(c.Bin, c.Args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = c.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := sp.start(cmd); err != nil {
		return nil, err
	}
	p := &Process{name: c.Name, logPath: c.LogPath, cmd: cmd, done: make(chan struct{})}
	go p.reap(c.OnExit)
	return p, nil
}

func (p *Process) reap(onExit func(pid int, err error)) {
	p.waitErr = p.cmd.Wait()
	if onExit != nil {
		onExit(p.PID(), p.waitErr)
	}
	close(p.done)
}

// PID is the process's ID, which is also its process group's.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// LogPath is the file the process writes its output to.
func (p *Process) LogPath() string { return p.logPath }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitError describes a process that ended when it should be running, with
// the tail of its log. Call it only once Exited.
func (p *Process) ExitError() error {
	return fmt.Errorf("%s (pid %d) exited: %v\n--- last lines of %s ---\n%s",
		p.name, p.PID(), p.waitErr, p.logPath, FileTail(p.logPath, TailLines))
}

// ExitCode is the process's exit code, -1 if a signal ended it. Call it
// only once Exited.
func (p *Process) ExitCode() int { return p.cmd.ProcessState.ExitCode() }

// Stop ends the process's whole group: SIGTERM, then SIGKILL if it has not
// exited within grace (at once if grace is 0), and waits until it has been
// reaped. It reports whether the process had exited before the SIGKILL.
func (p *Process) Stop(grace time.Duration) (exitedBeforeKill bool) {
	pgid := p.PID() // Setpgid with Pgid 0 makes the child a group leader.
	if grace > 0 && !p.Exited() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	exitedBeforeKill = p.Exited()
	// Also after a clean exit: anything the process forked into its group
	// must go too. ESRCH (group already empty) is the normal outcome.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
	return exitedBeforeKill
}

// FileTail returns the last n lines of a file, or a note saying why it could
// not be read.
func FileTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(string(bytes.TrimRight(b, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
