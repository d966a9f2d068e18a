package bench

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Proc is one process whose cost a phase measures.
type Proc struct {
	Name  string // "hub", "agent member-1", "member-1 kube-apiserver", …
	Group string // GroupHub, GroupAgent or GroupMembers
	PID   int
}

// Process groups of Usage.
const (
	GroupHub     = "hub"
	GroupAgent   = "agent"
	GroupMembers = "members"
)

// Usage is what one process used in one phase.
type Usage struct {
	Proc
	CPU    float64 // CPU-seconds (utime+stime)
	PeakMB float64 // peak resident set in the phase (VmHWM after clear_refs), MB
}

// meter measures a phase: the processes' CPU and peak RSS, and the
// machine's busy share.
type meter struct {
	procs     []Proc
	ticks     []int64
	busy, all int64 // /proc/stat jiffies at the start
}

// clockHz is the kernel's USER_HZ (getconf CLK_TCK), 100 if unknown.
var clockHz = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	hz, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || hz <= 0 {
		return 100
	}
	return hz
}()

// startMeter resets each process's peak RSS (writing 5 to clear_refs, as
// the baseline did) and reads its CPU.
func startMeter(procs []Proc) (*meter, error) {
	m := &meter{procs: procs, ticks: make([]int64, len(procs))}
	for i, p := range procs {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.PID), []byte("5"), 0); err != nil {
			return nil, fmt.Errorf("reset peak RSS of %s: %w", p.Name, err)
		}
		t, err := cpuTicks(p.PID)
		if err != nil {
			return nil, fmt.Errorf("CPU of %s: %w", p.Name, err)
		}
		m.ticks[i] = t
	}
	var err error
	if m.busy, m.all, err = machineJiffies(); err != nil {
		return nil, err
	}
	return m, nil
}

// stop returns each process's use since start, and the machine's busy
// share (0–1) of all its cores.
func (m *meter) stop() ([]Usage, float64, error) {
	out := make([]Usage, len(m.procs))
	for i, p := range m.procs {
		t, err := cpuTicks(p.PID)
		if err != nil {
			return nil, 0, fmt.Errorf("CPU of %s: %w", p.Name, err)
		}
		hwm, err := peakKB(p.PID)
		if err != nil {
			return nil, 0, fmt.Errorf("peak RSS of %s: %w", p.Name, err)
		}
		out[i] = Usage{Proc: p, CPU: float64(t-m.ticks[i]) / clockHz, PeakMB: float64(hwm) / 1024}
	}
	busy, all, err := machineJiffies()
	if err != nil {
		return nil, 0, err
	}
	share := 0.0
	if all > m.all {
		share = float64(busy-m.busy) / float64(all-m.all)
	}
	return out, share, nil
}

// cpuTicks is a process's utime+stime (/proc/PID/stat fields 14 and 15).
func cpuTicks(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(data)
	// The command name (field 2) may hold spaces; the fields after it do not.
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, err := strconv.ParseInt(fields[11], 10, 64)
	if err != nil {
		return 0, err
	}
	stime, err := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime, err
}

// peakKB is a process's VmHWM in kB.
func peakKB(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// machineJiffies is the machine's busy and total CPU time (/proc/stat's
// first line; idle and iowait are not busy).
func machineJiffies() (busy, all int64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 {
		return 0, 0, fmt.Errorf("short /proc/stat line %q", line)
	}
	for i, v := range f[1:9] { // user … steal; guest time is already in user
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parse /proc/stat: %w", err)
		}
		all += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, all, nil
}
