package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

// TestMemoryFlags: --memory-limit sets the runtime's soft memory limit
// and --gc-percent its collection target (Go's 100 unless given); a
// limit that is no quantity stops the hub before it starts.
func TestMemoryFlags(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	t.Setenv("GOGC", "")
	debug.SetGCPercent(70)
	o, err := parseOptions([]string{"--data-dir", "d", "--memory-limit", "1800Mi"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.gc.Apply(); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != 1800<<20 {
		t.Errorf("--memory-limit 1800Mi: limit %d; want %d", got, 1800<<20)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d; want the hub's default, Go's 100", got)
	}
	o, err = parseOptions([]string{"--data-dir", "d", "--gc-percent", "60"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.gc.Apply(); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(100); got != 60 {
		t.Errorf("--gc-percent 60: GC percent %d; want 60", got)
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"--data-dir", t.TempDir(), "--memory-limit", "lots"}, io.Discard, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "--memory-limit") {
		t.Errorf("run(--memory-limit lots) = %d, %q; want 2 and an error naming the flag", code, stderr.String())
	}
}
