package luavm

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the package if goroutines (memory watchers) outlive the tests.
func TestMain(m *testing.M) {
	before := goroutines()
	code := m.Run()
	deadline := time.Now().Add(5 * time.Second)
	for goroutines() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := goroutines(); code == 0 && n > before {
		fmt.Fprintf(os.Stderr, "goroutine leak: %d goroutines, %d before the tests\n", n, before)
		code = 1
	}
	os.Exit(code)
}

// goroutines counts live goroutines other than the ones the testing and
// signal packages start for themselves (the fuzz engine installs a signal
// handler whose goroutine lives until the process exits).
func goroutines() int {
	buf := make([]byte, 1<<20)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if !strings.Contains(g, "os/signal.loop") {
			n++
		}
	}
	return n
}
