package security

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// reportEnv names the file the suite writes its figures to, as Markdown,
// and the same as JSON beside it (the name's extension replaced by
// ".json"); unset: none.
const reportEnv = "TETHER_SECURITY_REPORT"

// row is one attack's line of the report.
type row struct {
	Test    string `json:"test"`
	Attack  string `json:"attack"`
	Outcome string `json:"outcome"`
	// AttackMs is how long the attack's own calls took.
	AttackMs float64 `json:"attackMs"`
	// Probes is how many probe cycles ran, During how many of them began
	// while the attack ran.
	Probes    int       `json:"probes"`
	During    int       `json:"probesDuringAttack"`
	Apply     latencyMs `json:"applyMs"`
	Heartbeat latencyMs `json:"heartbeatMs"`
	Memory    memory    `json:"hubMemory"`
}

// latencyMs is a latency in milliseconds, for the report.
type latencyMs struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func (l latency) ms() latencyMs {
	return latencyMs{N: l.N, P50: ms(l.P50), P99: ms(l.P99), Max: ms(l.Max)}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (l latencyMs) String() string { return fmt.Sprintf("%.1f / %.1f / %.1f", l.P50, l.P99, l.Max) }

// memory is the hub process's resident memory around an attack, in KiB:
// VmRSS before and after, and VmHWM (the highest VmRSS since the process
// started) after.
type memory struct {
	RSSBeforeKiB int64 `json:"rssBeforeKiB"`
	RSSAfterKiB  int64 `json:"rssAfterKiB"`
	PeakKiB      int64 `json:"peakKiB"`
}

func (m memory) String() string {
	return fmt.Sprintf("%.0f → %.0f (peak %.0f)", mib(m.RSSBeforeKiB), mib(m.RSSAfterKiB), mib(m.PeakKiB))
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

// procMemory reads VmRSS and VmHWM of process pid, in KiB.
func procMemory(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read the hub's memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("read the hub's memory: %s: %w", k, err)
		}
		if k == "VmRSS" {
			rss = n
		} else {
			hwm = n
		}
	}
	return rss, hwm, sc.Err()
}

// figures collects the rows of every test of the run.
type figures struct {
	mu   sync.Mutex // guards rows
	rows []row
	// samples are every probe's latencies by test, for the totals.
	applies, heartbeats map[string][]time.Duration
}

var suiteReport = &figures{applies: map[string][]time.Duration{}, heartbeats: map[string][]time.Duration{}}

func (r *figures) add(rw row, p *probe) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, rw)
	r.applies[rw.Test] = append(r.applies[rw.Test], p.applies...)
	r.heartbeats[rw.Test] = append(r.heartbeats[rw.Test], p.heartbeats...)
}

// totals is one line per test: its attacks and every probe call of them.
func (r *figures) totals() []row {
	var out []row
	seen := map[string]bool{}
	for _, rw := range r.rows {
		if seen[rw.Test] {
			continue
		}
		seen[rw.Test] = true
		t := row{Test: rw.Test, Attack: "all attacks", Memory: memory{RSSBeforeKiB: rw.Memory.RSSBeforeKiB},
			Apply: summarize(r.applies[rw.Test]).ms(), Heartbeat: summarize(r.heartbeats[rw.Test]).ms()}
		for _, x := range r.rows {
			if x.Test == rw.Test {
				t.AttackMs += x.AttackMs
				t.Probes += x.Probes
				t.During += x.During
				t.Memory.RSSAfterKiB, t.Memory.PeakKiB = x.Memory.RSSAfterKiB, max(t.Memory.PeakKiB, x.Memory.PeakKiB)
			}
		}
		t.Outcome = fmt.Sprintf("%d attacks", r.count(rw.Test))
		out = append(out, t)
	}
	return out
}

func (r *figures) count(test string) int {
	n := 0
	for _, rw := range r.rows {
		if rw.Test == test {
			n++
		}
	}
	return n
}

// markdown is the report as Markdown tables, one per test.
func (r *figures) markdown() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "# Hostile-input suite (test/security): %d attacks\n\n", len(r.rows))
	b.WriteString("Each attack ran against a real tether-hub process while a probe applied a ConfigMap as an admin and sent a\n" +
		"heartbeat on a healthy cluster's stream (a change of its Ready state, which the hub writes at once; read back\n" +
		"with GetCluster), again and again. Latencies are\n" +
		"p50 / p99 / max in ms; memory is the hub's VmRSS before → after the attack in MiB, and its VmHWM after.\n")
	totals := r.totals()
	b.WriteString("\n## Totals\n\n")
	writeTable(&b, totals)
	for _, tot := range totals {
		fmt.Fprintf(&b, "\n## %s\n\n", tot.Test)
		var rows []row
		for _, rw := range r.rows {
			if rw.Test == tot.Test {
				rows = append(rows, rw)
			}
		}
		writeTable(&b, rows)
	}
	return b.String()
}

func writeTable(b *strings.Builder, rows []row) {
	b.WriteString("| # | test | attack | outcome | attack ms | probes (during) | apply ms | heartbeat ms | hub MiB |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for i, rw := range rows {
		fmt.Fprintf(b, "| %d | %s | %s | %s | %.1f | %d (%d) | %s | %s | %s |\n", i+1, rw.Test, cell(rw.Attack), cell(rw.Outcome),
			rw.AttackMs, rw.Probes, rw.During, rw.Apply, rw.Heartbeat, rw.Memory)
	}
}

// cell makes s fit in a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// write writes the report to the file named by reportEnv, if set.
func (r *figures) write() error {
	path := os.Getenv(reportEnv)
	if path == "" {
		return nil
	}
	if filepath.Ext(path) == ".json" {
		return fmt.Errorf("%s=%s: want the Markdown file's name; the JSON goes beside it", reportEnv, path)
	}
	if err := os.WriteFile(path, []byte(r.markdown()), 0o644); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	r.mu.Lock()
	data, err := json.MarshalIndent(struct {
		Attacks int   `json:"attacks"`
		Totals  []row `json:"totals"`
		Rows    []row `json:"rows"`
	}{len(r.rows), r.totals(), r.rows}, "", "  ")
	r.mu.Unlock()
	if err != nil {
		return fmt.Errorf("encode the report: %w", err)
	}
	if err := os.WriteFile(strings.TrimSuffix(path, filepath.Ext(path))+".json", data, 0o644); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}
