package load

import (
	"runtime/debug"
	"syscall"
)

// DefaultWorkerGCPercent is the workers' garbage collection target (Go's
// GOGC) unless Config.WorkerGCPercent sets one. A worker holds the state
// of hundreds of simulated agents in one heap, and at Go's 100 its
// collector took a fifth of its CPU, which the hub, on the same two cores,
// then lacked: the figures are the hub's, and an agent in a member
// cluster has a heap (and a core) of its own. At 400 the million works
// (4 workers of 250 agents) were all held after 54.5 s instead of 63–65 s
// in runs one after another, each worker near 1 GiB.
const DefaultWorkerGCPercent = 400

// maxWorkerMemoryLimit caps the soft memory limit a worker gets by
// default (workerMemoryLimit).
const maxWorkerMemoryLimit = 2 << 30

// workerMemoryLimit is the soft memory limit (Go's GOMEMLIMIT) of each of
// workers processes unless Config.WorkerMemoryLimit sets one: half of the
// machine's memory shared among them, at most maxWorkerMemoryLimit, so
// that the high GC target never costs the hub its memory.
func workerMemoryLimit(workers int) int64 {
	total := memTotal()
	if total <= 0 {
		return maxWorkerMemoryLimit
	}
	return min(total/2/int64(max(workers, 1)), maxWorkerMemoryLimit)
}

// memTotal is the machine's memory in bytes; zero when the kernel does
// not say. The load tool runs on Linux only (test/proc's Pdeathsig).
func memTotal() int64 {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil {
		return 0
	}
	return int64(info.Totalram) * int64(info.Unit)
}

// setGC applies a worker's collection target and soft memory limit; zero
// keeps Go's.
func setGC(percent int, limit int64) {
	if percent > 0 {
		debug.SetGCPercent(percent)
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}
