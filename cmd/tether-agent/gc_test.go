package main

import (
	"bytes"
	"math"
	"runtime/debug"
	"testing"
)

// TestGCOptions: --gc-percent defaults to defaultGCPercent unless $GOGC is
// set, and --memory-limit sets the runtime's soft limit.
func TestGCOptions(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	tests := []struct {
		name      string
		gogc      string // $GOGC
		args      []string
		percent   int   // want
		limit     int64 // want
		wantError bool
	}{
		{"default", "", nil, defaultGCPercent, math.MaxInt64, false},
		{"flag", "", []string{"--gc-percent", "30"}, 30, math.MaxInt64, false},
		{"GOGC kept", "80", nil, 100, math.MaxInt64, false}, // the runtime read $GOGC at start (100 in this test)
		{"flag over GOGC", "80", []string{"--gc-percent", "40"}, 40, math.MaxInt64, false},
		{"memory limit", "", []string{"--memory-limit", "48Mi"}, defaultGCPercent, 48 << 20, false},
		{"bad memory limit", "", []string{"--memory-limit", "lots"}, 100, math.MaxInt64, true},
		{"zero memory limit", "", []string{"--memory-limit", "0"}, 100, math.MaxInt64, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOGC", tt.gogc)
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			var stderr bytes.Buffer
			o, err := parse(append([]string{"--hub", "h:1"}, tt.args...), &stderr)
			if err != nil {
				t.Fatalf("parse(%q): %v", tt.args, err)
			}
			err = o.gc.Apply()
			if (err != nil) != tt.wantError {
				t.Fatalf("apply(%q) error = %v; want error %t", tt.args, err, tt.wantError)
			}
			if err != nil {
				return
			}
			if got := debug.SetGCPercent(100); got != tt.percent {
				t.Errorf("apply(%q): GC percent %d; want %d", tt.args, got, tt.percent)
			}
			if got := debug.SetMemoryLimit(-1); got != tt.limit {
				t.Errorf("apply(%q): memory limit %d; want %d", tt.args, got, tt.limit)
			}
		})
	}
}
