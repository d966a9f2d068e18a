package proc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/test/proc"
)

// procFrame marks a goroutine running code of package proc (a spawner or a
// reaper), which must end with the test that started it.
const procFrame = "github.com/tetherproj/tether/test/proc."

func TestMain(m *testing.M) {
	os.Exit(leakcheck.Check(m.Run(), leakcheck.Filter{Only: []string{procFrame}, Ignore: []string{"proc_test."}}))
}

func TestStopLeavesNoProcess(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace time.Duration
	}{
		{"SIGTERM", time.Second},
		{"SIGKILL at once", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := proc.NewSpawner()
			defer sp.Close()
			logPath := filepath.Join(t.TempDir(), "sleep.log")
			p, err := proc.Start(sp, proc.Config{Name: "sleep", Bin: "sleep", Args: []string{"60"}, LogPath: logPath})
			if err != nil {
				t.Fatalf("Start(sleep 60) = %v", err)
			}
			if p.Exited() {
				t.Fatalf("sleep 60 exited at once: %v", p.ExitError())
			}
			p.Stop(tc.grace)
			if !p.Exited() {
				t.Errorf("Exited() = false after Stop")
			}
			if err := syscall.Kill(p.PID(), 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("kill(%d, 0) after Stop = %v; want ESRCH", p.PID(), err)
			}
		})
	}
}

func TestExitErrorQuotesLog(t *testing.T) {
	sp := proc.NewSpawner()
	defer sp.Close()
	var onExit error
	p, err := proc.Start(sp, proc.Config{
		Name: "sh", Bin: "sh", Args: []string{"-c", "echo boom; exit 3"},
		LogPath: filepath.Join(t.TempDir(), "sh.log"),
		OnExit:  func(_ int, err error) { onExit = err },
	})
	if err != nil {
		t.Fatalf("Start(sh) = %v", err)
	}
	<-p.Done()
	if onExit == nil {
		t.Errorf("OnExit got a nil error for exit status 3")
	}
	if got := p.ExitError().Error(); !strings.Contains(got, "sh (pid") || !strings.HasSuffix(got, "boom") {
		t.Errorf("ExitError() = %q; want the name and the log's last line", got)
	}
	p.Stop(0)
}

func TestStopReportsTheKill(t *testing.T) {
	sp := proc.NewSpawner()
	defer sp.Close()
	start := func(name, script string) *proc.Process {
		logPath := filepath.Join(t.TempDir(), name+".log")
		p, err := proc.Start(sp, proc.Config{Name: name, Bin: "sh", Args: []string{"-c", script}, LogPath: logPath})
		if err != nil {
			t.Fatalf("Start(%s) = %v", name, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = proc.Poll(ctx, 5*time.Millisecond, func(context.Context) error {
			if p.Exited() {
				return proc.Permanent(p.ExitError())
			}
			if b, _ := os.ReadFile(logPath); !strings.Contains(string(b), "ready") {
				return errors.New("not ready")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return p
	}
	// A child that ignores SIGTERM is still there after any grace.
	deaf := start("deaf", `trap "" TERM; echo ready; exec sleep 60`)
	if deaf.Stop(50 * time.Millisecond) {
		t.Errorf("Stop(deaf) = true; want false: it ignores SIGTERM and took SIGKILL")
	}
	if code := deaf.ExitCode(); code != -1 {
		t.Errorf("ExitCode() after SIGKILL = %d; want -1", code)
	}
	obedient := start("obedient", `echo ready; exec sleep 60`)
	if !obedient.Stop(time.Minute) {
		t.Errorf("Stop(obedient) = false; want true: SIGTERM ends sleep")
	}
	if !obedient.Stop(0) {
		t.Errorf("second Stop = false; want true: the process had already exited")
	}
}

// recorder is a testing.TB whose cleanups, errors and logs the test reads.
type recorder struct {
	testing.TB
	cleanups []func()
	errors   []string
	logs     []string
	failed   bool
}

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Failed() bool { return r.failed }

func TestStopAtEnd(t *testing.T) {
	sp := proc.NewSpawner()
	defer sp.Close()
	logPath := filepath.Join(t.TempDir(), "sh.log")
	p, err := proc.Start(sp, proc.Config{Name: "sh", Bin: "sh", Args: []string{"-c", `echo boom; exit 3`}, LogPath: logPath})
	if err != nil {
		t.Fatalf("Start(sh) = %v", err)
	}
	<-p.Done()
	if code := p.ExitCode(); code != 3 {
		t.Errorf("ExitCode() = %d; want 3", code)
	}
	r := &recorder{TB: t}
	proc.StopAtEnd(r, p, time.Second)
	if len(r.cleanups) != 1 {
		t.Fatalf("StopAtEnd registered %d cleanups; want 1", len(r.cleanups))
	}
	r.cleanups[0]()
	if len(r.errors) != 0 || len(r.logs) != 0 {
		t.Errorf("StopAtEnd of an exited process in a passing test: errors %q, logs %q; want none", r.errors, r.logs)
	}
	r.failed = true
	r.cleanups[0]()
	if len(r.logs) != 1 || !strings.Contains(r.logs[0], "boom") {
		t.Errorf("StopAtEnd in a failed test logged %q; want the log's tail", r.logs)
	}
}

func TestPoll(t *testing.T) {
	stop := errors.New("died")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	n := 0
	err := proc.Poll(ctx, time.Millisecond, func(context.Context) error {
		if n++; n < 3 {
			return errors.New("not yet")
		}
		return proc.Permanent(stop)
	})
	if err != stop || n != 3 {
		t.Errorf("Poll = %v after %d calls; want %v after 3", err, n, stop)
	}
	err = proc.Poll(ctx, time.Millisecond, func(context.Context) error { return errors.New("not yet") })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "not yet") {
		t.Errorf("Poll = %v; want the deadline and the last reason", err)
	}
}

func TestRepoRoot(t *testing.T) {
	root, err := proc.RepoRoot()
	if err != nil {
		t.Fatalf("RepoRoot() = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "test", "proc", "proc_test.go")); err != nil {
		t.Errorf("RepoRoot() = %s, which does not hold this test: %v", root, err)
	}
}
