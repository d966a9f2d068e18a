// Package leakcheck fails a test binary whose tests leave goroutines
// running. A package's TestMain hands its exit code to it:
//
//	func TestMain(m *testing.M) {
//		os.Exit(leakcheck.Main(m, leakcheck.Filter{Ignore: []string{"k8s.io/klog/v2."}}))
//	}
//
// After passing tests it waits up to Wait for the goroutines it counts to
// end, and when some are still running it prints their stacks to stderr and
// turns the exit code into 1. It never counts the goroutine that checks, the
// test binary's main goroutine, nor goroutines that the runtime, package
// testing or os/signal start for themselves (the fuzz engine installs a
// signal handler whose goroutine lives until the process exits).
//
// It is for tests only; it depends on the standard library alone.
package leakcheck

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Wait is how long a check waits for goroutines to end after the tests:
// tests wait for what they start, so only scheduling delay remains.
const Wait = 5 * time.Second

// poll is how often a check looks at the goroutines again while it waits.
const poll = 20 * time.Millisecond

// Filter selects the goroutines a check counts. Entries are substrings of
// a goroutine's stack as runtime.Stack prints it, such as a package's path
// followed by a dot ("github.com/tetherproj/tether/hub/store.") or a
// function ("hub/liveness.(*Leases)").
type Filter struct {
	// Only, when not empty, restricts the check to goroutines whose stack
	// contains one of these.
	Only []string
	// Ignore excludes goroutines whose stack contains one of these.
	Ignore []string
}

// Main runs the tests of m and returns the exit code for os.Exit: the
// tests' own, or 1 when they passed but a goroutine that f counts and that
// was not running before the tests is still running after Wait.
func Main(m *testing.M, f Filter) int {
	before := map[string]bool{}
	for _, g := range goroutines() {
		before[g.id] = true
	}
	return check(m.Run(), before, f, Wait, os.Stderr)
}

// Check is Main for a TestMain that has more to do between m.Run and the
// check, such as stopping what it started for the tests: it returns code
// when code is not 0 or no goroutine that f counts is running after Wait,
// and 1 otherwise. Unlike Main it counts goroutines that were running
// before the tests too, so f should have Only set.
func Check(code int, f Filter) int {
	return check(code, nil, f, Wait, os.Stderr)
}

func check(code int, before map[string]bool, f Filter, wait time.Duration, w io.Writer) int {
	if code != 0 {
		return code
	}
	if leaked := leaked(before, f, wait); leaked != "" {
		fmt.Fprintf(w, "goroutines still running after the tests:\n%s\n", leaked)
		return 1
	}
	return 0
}

// leaked waits up to wait for no goroutine that f counts, other than those
// in before, to be running, and returns the stacks of those that still are.
func leaked(before map[string]bool, f Filter, wait time.Duration) string {
	deadline := time.Now().Add(wait)
	for {
		var out []string
		for _, g := range goroutines() {
			if !before[g.id] && f.counts(g) {
				out = append(out, g.stack)
			}
		}
		if len(out) == 0 || time.Now().After(deadline) {
			return strings.Join(out, "\n\n")
		}
		time.Sleep(poll)
	}
}

// goroutine is one goroutine as runtime.Stack prints it.
type goroutine struct {
	id    string // "goroutine 7"
	stack string
	entry string // the function it started with
	by    string // the function that started it; "" for the main goroutine
}

// goroutines returns every goroutine but the calling one.
func goroutines() []goroutine {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	stacks := strings.Split(strings.TrimSpace(string(buf)), "\n\n")
	var out []goroutine
	for _, s := range stacks[1:] { // the first is the calling goroutine
		out = append(out, parse(s))
	}
	return out
}

func parse(stack string) goroutine {
	g := goroutine{stack: stack}
	lines := strings.Split(stack, "\n")
	g.id, _, _ = strings.Cut(lines[0], " [")
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "\t"), strings.HasPrefix(l, "runtime.goexit("):
			// a file and line, or the frame under a goroutine that has
			// not run yet
		case strings.HasPrefix(l, "created by "):
			g.by, _, _ = strings.Cut(strings.TrimPrefix(l, "created by "), " in goroutine ")
		default:
			g.entry = l
		}
	}
	return g
}

// own are the packages whose goroutines are never counted.
var own = []string{"runtime.", "testing.", "testing/", "os/signal."}

func (f Filter) counts(g goroutine) bool {
	if g.by == "" && strings.HasPrefix(g.entry, "main.main(") {
		return false
	}
	for _, p := range own {
		if strings.HasPrefix(g.by, p) || strings.HasPrefix(g.entry, p) {
			return false
		}
	}
	for _, s := range f.Ignore {
		if strings.Contains(g.stack, s) {
			return false
		}
	}
	if len(f.Only) == 0 {
		return true
	}
	for _, s := range f.Only {
		if strings.Contains(g.stack, s) {
			return true
		}
	}
	return false
}
