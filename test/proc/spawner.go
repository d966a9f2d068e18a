package proc

import (
	"os/exec"
	"runtime"
)

// Spawner starts child processes from one goroutine locked to its OS thread.
//
// The kernel delivers a child's parent-death signal (SysProcAttr.Pdeathsig)
// when the *thread* that forked it exits, not the process (see the caveat in
// package syscall). Go may start processes from any thread and may retire a
// thread at any time, which would kill children early. Forking from a thread
// that lives exactly as long as the Spawner fixes that: the thread survives
// until Close, and since run returns without unlocking, the runtime then
// destroys the thread, so anything still alive gets SIGKILL. If the test binary
// dies instead (panic, os.Exit, SIGKILL), the thread dies with it.
type Spawner struct {
	reqs chan spawnReq
	done chan struct{} // closed when run has returned
}

type spawnReq struct {
	cmd  *exec.Cmd
	errc chan error
}

// NewSpawner starts a Spawner's goroutine; Close ends it.
func NewSpawner() *Spawner {
	s := &Spawner{reqs: make(chan spawnReq), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *Spawner) run() {
	runtime.LockOSThread() // never unlocked: see the type's comment.
	defer close(s.done)
	for r := range s.reqs {
		r.errc <- r.cmd.Start()
	}
}

// start starts cmd on the spawner's thread. It must not be called during or
// after Close (callers guarantee that with a stopped flag of their own).
func (s *Spawner) start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	s.reqs <- spawnReq{cmd: cmd, errc: errc}
	return <-errc
}

// Close stops the Spawner and waits for its goroutine (and thread) to end.
// Stop every Process first: their parent-death signal fires now.
func (s *Spawner) Close() {
	close(s.reqs)
	<-s.done
}
