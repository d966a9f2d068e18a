package agent_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the package when goroutines of the agent or gRPC's
// transport outlive the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(5 * time.Second)
		for {
			buf := make([]byte, 1<<20)
			var leaked []string
			for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")[1:] {
				if strings.Contains(g, "tether/agent") || strings.Contains(g, "grpc/internal/transport") {
					leaked = append(leaked, g)
				}
			}
			if len(leaked) == 0 {
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintf(os.Stderr, "goroutines leaked after the tests:\n%s\n", strings.Join(leaked, "\n\n"))
				code = 1
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	os.Exit(code)
}
