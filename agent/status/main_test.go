package status_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/kit"
)

// env is the one member cluster the package's tests share; each test works
// in its own namespace.
var env *kit.Env

// ownFrames mark goroutines running this package's code.
var ownFrames = []string{"github.com/tetherproj/tether/agent/apply.", "github.com/tetherproj/tether/agent/status.", "k8s.io/client-go/tools/cache.", "k8s.io/client-go/util/workqueue."}

// leakDeadline is how long TestMain waits for goroutines to end after the
// tests: Run waits for its own, so only scheduling delay remains.
const leakDeadline = 5 * time.Second

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), kit.StartTimeout)
	e, err := kit.Start(ctx, kit.Options{Clusters: kit.Members(1)})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env = e
	code := m.Run()
	env.Stop()
	if code == 0 {
		if leaked := leakedGoroutines(leakDeadline); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines still running after the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// leakedGoroutines waits up to d for no goroutine to run the applier's,
// informers' or work queues' code, and returns the stacks of those that
// still do.
func leakedGoroutines(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			for _, f := range ownFrames {
				if strings.Contains(g, f) && !strings.Contains(g, "TestMain") {
					leaked = append(leaked, g)
					break
				}
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
