package kit

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/test/proc"
)

// StartTimeout bounds StartT's start-up. Three clusters start in well under
// half a minute on two cores; the margin is for a loaded CI machine.
const StartTimeout = 2 * time.Minute

// failureLogLines is how many lines of each process's log StartT prints when
// the test has failed.
const failureLogLines = 15

// StartT starts an Env for a test and stops it when the test (and its
// subtests) end, whether it passed, failed or panicked. A start-up error
// fails the test at once. With an empty opts.Dir it uses t.TempDir(); with a
// nil opts.Logger the kit's messages go to t.Log. If the test failed, the end
// of every process's log is printed before the Env stops.
func StartT(t testing.TB, opts Options) *Env {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Logger == nil {
		opts.Logger = TestLogger(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	env, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range env.Processes() {
				t.Logf("--- last lines of %s (pid %d) ---\n%s", p.LogPath, p.PID, proc.FileTail(p.LogPath, failureLogLines))
			}
		}
		env.Stop()
	})
	return env
}

// TestLogger returns an hclog logger that writes to t.Log. Use it only for
// things that stop logging before the test ends (the kit's Env does).
func TestLogger(t testing.TB) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:        "kit",
		Output:      testWriter{t},
		Level:       hclog.Info,
		DisableTime: true,
	})
}

// testWriter turns each write (one log line, from hclog) into a t.Log call.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
