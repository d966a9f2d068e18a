package load

import (
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"testing"
)

// TestWorkerGCArgs: workers get DefaultWorkerGCPercent and a soft memory
// limit of at most 2 GiB that shares half of the machine's memory, unless
// the configuration sets them.
func TestWorkerGCArgs(t *testing.T) {
	d := &driver{cfg: Config{Workers: 8}}
	args := d.gcArgs()
	if got := flagValue(t, args, "--gc-percent"); got != DefaultWorkerGCPercent {
		t.Errorf("--gc-percent %d, want %d", got, DefaultWorkerGCPercent)
	}
	limit := flagValue(t, args, "--memory-limit")
	if total := memTotal(); total == 0 || limit <= 0 || limit > maxWorkerMemoryLimit || int64(limit)*8 > total/2 {
		t.Errorf("--memory-limit %d with 8 workers on %d bytes of memory: want at most 2 GiB and 8 of them within half", limit, total)
	}
	d.cfg.WorkerGCPercent, d.cfg.WorkerMemoryLimit = 150, 1<<20
	args = d.gcArgs()
	if p, l := flagValue(t, args, "--gc-percent"), flagValue(t, args, "--memory-limit"); p != 150 || l != 1<<20 {
		t.Errorf("configured 150 and 1 MiB: got --gc-percent %d --memory-limit %d", p, l)
	}
}

// TestSetGC: a worker applies the settings it is given and keeps Go's for
// zero.
func TestSetGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	setGC(0, 0)
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != 100 || l != math.MaxInt64 {
		t.Fatalf("zeros changed the settings: %d, %d", p, l)
	}
	setGC(400, 1<<30)
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64); p != 400 || l != 1<<30 {
		t.Fatalf("setGC(400, 1 GiB): %d, %d", p, l)
	}
}

func flagValue(t *testing.T, args []string, name string) int {
	t.Helper()
	i := slices.Index(args, name)
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("%s not in %q", name, args)
	}
	v, err := strconv.Atoi(args[i+1])
	if err != nil {
		t.Fatalf("%s %q: %v", name, args[i+1], err)
	}
	return v
}
