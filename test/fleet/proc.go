package fleet

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long the hub or an agent may take to exit after SIGTERM
// before its process group gets SIGKILL. The hub lets calls finish for up to
// 10 s on a graceful stop; with the agents gone first it has none left, so
// it exits in well under a second. The margin is for a loaded machine.
const stopGrace = 15 * time.Second

// logTailLines is how many lines of a process's log an error quotes.
const logTailLines = 25

// spawner starts child processes from one goroutine locked to its OS thread,
// so that their parent-death signal fires when the fleet's owner dies, not
// when Go happens to retire a thread (see test/kit's spawner, which this
// mirrors).
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
	runtime.LockOSThread() // never unlocked: the thread dies with the spawner.
	defer close(s.done)
	for r := range s.reqs {
		r.errc <- r.cmd.Start()
	}
}

// start starts cmd on the spawner's thread.
func (s *spawner) start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	s.reqs <- spawnReq{cmd: cmd, errc: errc}
	return <-errc
}

// close stops the spawner and waits for its goroutine to end.
func (s *spawner) close() {
	close(s.reqs)
	<-s.done
}

// proc is one hub or agent process.
type proc struct {
	role, name string
	logPath    string
	cmd        *exec.Cmd
	done       chan struct{} // closed once the process has exited and been reaped
	waitErr    error         // cmd.Wait's result; read only after done is closed
}

// startProc starts bin with args, its output appended to logPath, and a
// goroutine that reaps it (it ends when the process does; stop makes sure
// it does).
func startProc(s *spawner, role, name, bin string, args []string, logPath string) (*proc, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s %s: %w", role, name, err)
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &proc{role: role, name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	if err := s.start(cmd); err != nil {
		return nil, fmt.Errorf("start %s %s: %w", role, name, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes a process that ended when it should be running.
func (p *proc) exitError() error {
	return fmt.Errorf("%s %s (pid %d) exited: %v\n--- last lines of %s ---\n%s",
		p.role, p.name, p.pid(), p.waitErr, p.logPath, LogTail(p.logPath, logTailLines))
}

// stop ends the process's group: SIGTERM, SIGKILL after grace, and waits
// until it has been reaped.
func (p *proc) stop(grace time.Duration) {
	pgid := p.pid() // Setpgid makes the child a group leader.
	if !p.exited() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	// Also after a clean exit: anything left in the group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
}

// LogTail returns the last n lines of a log file, or why it could not be
// read.
func LogTail(path string, n int) string {
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
