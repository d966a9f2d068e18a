package kit_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// kitFrame marks a goroutine running code of package kit (not kit_test).
const kitFrame = "github.com/tetherproj/tether/test/kit."

// leakDeadline is how long TestMain waits for the kit's goroutines to end
// after the tests: they end when their processes have been reaped, which Stop
// waits for, so only scheduling delay remains.
const leakDeadline = 5 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && os.Getenv(helperEnv) == "" {
		if leaked := kitGoroutines(leakDeadline); leaked != "" {
			fmt.Fprintf(os.Stderr, "kit goroutines still running after the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// kitGoroutines waits up to d for no goroutine to be running the kit's code
// and returns the stacks of those that still are.
func kitGoroutines(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, kitFrame) && !strings.Contains(g, "kit_test.TestMain") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
