package proc_test

import (
	"context"
	"errors"
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
