package leakcheck

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain checks this package's tests with the package itself.
func TestMain(m *testing.M) {
	os.Exit(Main(m, Filter{}))
}

// snapshot is the set of goroutines running now, as Main takes it.
func snapshot() map[string]bool {
	before := map[string]bool{}
	for _, g := range goroutines() {
		before[g.id] = true
	}
	return before
}

// leakyLoop runs until stop is closed.
func leakyLoop(stop chan struct{}) { <-stop }

// shortWork returns after d.
func shortWork(d time.Duration, done chan struct{}) {
	time.Sleep(d)
	close(done)
}

func TestCatchesLeakedGoroutine(t *testing.T) {
	before := snapshot()
	stop := make(chan struct{})
	go leakyLoop(stop)
	defer close(stop)
	var out bytes.Buffer
	if code := check(0, before, Filter{}, 100*time.Millisecond, &out); code != 1 {
		t.Errorf("check = %d; want 1", code)
	}
	if !strings.Contains(out.String(), "leakcheck.leakyLoop") {
		t.Errorf("output does not show the leaked stack:\n%s", out.String())
	}
}

func TestIgnoresFinishedGoroutine(t *testing.T) {
	before := snapshot()
	done := make(chan struct{})
	go shortWork(50*time.Millisecond, done) // still running when the check starts
	var out bytes.Buffer
	if code := check(0, before, Filter{}, 5*time.Second, &out); code != 0 {
		t.Errorf("check = %d; want 0; output:\n%s", code, out.String())
	}
	select {
	case <-done:
	default:
		t.Error("check returned before the goroutine ended")
	}
}

func TestFilter(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	go leakyLoop(stop)
	for _, tc := range []struct {
		name string
		f    Filter
		want int
	}{
		{"all", Filter{}, 1},
		{"ignored", Filter{Ignore: []string{"leakcheck.leakyLoop"}}, 0},
		{"only match", Filter{Only: []string{"leakcheck.leakyLoop"}}, 1},
		{"only other", Filter{Only: []string{"example.com/elsewhere."}}, 0},
		{"only but ignored", Filter{Only: []string{"leakcheck.leakyLoop"}, Ignore: []string{"TestFilter"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// No snapshot: the main goroutine, testing's and this test's
			// own are not counted anyway.
			var out bytes.Buffer
			if code := check(0, nil, tc.f, 50*time.Millisecond, &out); code != tc.want {
				t.Errorf("check = %d; want %d; output:\n%s", code, tc.want, out.String())
			}
		})
	}
}

func TestKeepsFailingCode(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	go leakyLoop(stop)
	var out bytes.Buffer
	if code := check(2, nil, Filter{}, time.Millisecond, &out); code != 2 || out.Len() != 0 {
		t.Errorf("check = %d, %q; want 2 and no output", code, out.String())
	}
}

func TestParse(t *testing.T) {
	g := parse("goroutine 7 [chan receive]:\n" +
		"example.com/p.wait(...)\n\t/src/p.go:3\n" +
		"example.com/p.Run()\n\t/src/p.go:9 +0x1d\n" +
		"created by example.com/p.Start in goroutine 1\n\t/src/p.go:20 +0x6f")
	if g.id != "goroutine 7" || g.entry != "example.com/p.Run()" || g.by != "example.com/p.Start" {
		t.Errorf("parse = %q, %q, %q", g.id, g.entry, g.by)
	}
	// A goroutine that has not run yet shows the runtime's frame under it.
	g = parse("goroutine 8 [runnable]:\n" +
		"example.com/p.Start.gowrap1()\n\t/src/p.go:20\n" +
		"runtime.goexit({})\n\t/go/src/runtime/asm_amd64.s:1771 +0x1\n" +
		"created by example.com/p.Start in goroutine 1\n\t/src/p.go:20 +0x45")
	if g.entry != "example.com/p.Start.gowrap1()" || !(Filter{}).counts(g) {
		t.Errorf("parse of an unstarted goroutine: entry %q, counted %v; want counted", g.entry, (Filter{}).counts(g))
	}
}
