package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// record makes p the fleet's hub, or the agent of its cluster (replacing
// the one Restart ended). The caller holds f.mu.
func (f *Fleet) record(p *process) {
	if p.role == RoleHub {
		f.hub = p
		return
	}
	for i, a := range f.agents {
		if a.name == p.name {
			f.agents[i] = p
			return
		}
	}
	f.agents = append(f.agents, p)
}

// lookup returns the hub (role RoleHub) or the agent of cluster name.
func (f *Fleet) lookup(role, name string) (*process, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if role == RoleHub && f.hub != nil {
		return f.hub, nil
	}
	for _, a := range f.agents {
		if role == RoleAgent && a.name == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("fleet: no %s %q", role, name)
}

// Signal sends sig to the hub (role RoleHub) or to the agent of cluster
// name: fault tests freeze one with SIGSTOP and thaw it with SIGCONT.
func (f *Fleet) Signal(role, name string, sig syscall.Signal) error {
	p, err := f.lookup(role, name)
	if err != nil {
		return err
	}
	if err := syscall.Kill(p.PID(), sig); err != nil {
		return fmt.Errorf("fleet: signal %s %s: %w", role, name, err)
	}
	return nil
}

// Kill ends the hub or an agent with SIGKILL (its whole process group, as
// a crash would) and waits until it is reaped. Restart starts it again.
func (f *Fleet) Kill(role, name string) error {
	p, err := f.lookup(role, name)
	if err != nil {
		return err
	}
	_ = syscall.Kill(p.PID(), syscall.SIGCONT) // a stopped process must die too
	p.Stop(0)
	return nil
}

// Restart kills the hub or an agent if it still runs, then starts it again
// with the same command line and log (appended to). A restarted hub is
// waited for as at start-up (hub.addr); a restarted agent is not. ctx
// bounds that wait.
func (f *Fleet) Restart(ctx context.Context, role, name string) error {
	return f.RestartWith(ctx, role, name)
}

// RestartWith is Restart with args added at the end of the command line,
// where a flag overrides the same flag given before (a hub restarted with
// a lower --max-works-per-cluster). Later restarts keep them.
func (f *Fleet) RestartWith(ctx context.Context, role, name string, args ...string) error {
	p, err := f.lookup(role, name)
	if err != nil {
		return err
	}
	if err := f.Kill(role, name); err != nil {
		return err
	}
	if role == RoleHub {
		if err := os.Remove(filepath.Join(f.HubDir, "hub.addr")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("fleet: restart hub: %w", err)
		}
	}
	f.mu.Lock()
	stopped := f.stopped
	var np *process
	if !stopped {
		np, err = startProcess(f.spawner, role, name, p.bin, append(slices.Clip(p.args), args...), p.logPath)
		if err == nil {
			f.record(np)
		}
	}
	f.mu.Unlock()
	switch {
	case stopped:
		return fmt.Errorf("fleet: restart %s %s: %w", role, name, errStopped)
	case err != nil:
		return fmt.Errorf("fleet: restart: %w", err)
	case role == RoleHub:
		return f.waitHub(ctx)
	}
	return nil
}

// Running returns nil while the hub (role RoleHub) or the agent of cluster
// name runs, else why it ended (ExitError, quoting its log).
func (f *Fleet) Running(role, name string) error {
	p, err := f.lookup(role, name)
	if err != nil {
		return err
	}
	if p.Exited() {
		return p.ExitError()
	}
	return nil
}
