package load

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Results are a run's figures, written to DIR/results.json.
type Results struct {
	Agents  int    `json:"agents"`
	Workers int    `json:"workers"`
	Enroll  string `json:"enroll"`
	// Load is the machine's load average when the run started.
	Load string `json:"load"`
	// Enrolled is how long the workers took to enroll and start their
	// agents, seconds; Connect when each agent first synced.
	Enrolled float64   `json:"enrolledSeconds"`
	Connect  Latencies `json:"connect"`
	// Registered is when the hub listed every cluster Ready, seconds
	// after the workers started.
	Registered float64 `json:"registeredSeconds"`

	Idle           *IdleResult   `json:"idle,omitempty"`
	FirstPlacement *Latencies    `json:"firstPlacement,omitempty"`
	Fanout         *Latencies    `json:"fanout,omitempty"`
	Works          *WorksResult  `json:"works,omitempty"`
	Restart        *ResyncResult `json:"restart,omitempty"`
	Storm          *ResyncResult `json:"storm,omitempty"`
	Fresh          *ResyncResult `json:"fresh,omitempty"`
	Flap           *FlapResult   `json:"flap,omitempty"`

	EtcdKeys  int64 `json:"etcdKeys,omitempty"`
	EtcdBytes int64 `json:"etcdBytes,omitempty"`
	// EtcdKeysByPrefix counts the keys by their first two segments.
	EtcdKeysByPrefix map[string]int64 `json:"etcdKeysByPrefix,omitempty"`

	// Samples are the hub's memory and CPU, once a second.
	Samples []Sample `json:"samples"`
	// Errors are the first agent errors.
	Errors []string `json:"errors,omitempty"`
}

// Latencies summarize how long each agent took, in seconds; All holds
// them sorted (for the CDF plots).
type Latencies struct {
	N    int       `json:"n"`
	P50  float64   `json:"p50"`
	P99  float64   `json:"p99"`
	Max  float64   `json:"max"`
	Load string    `json:"load,omitempty"`
	All  []float64 `json:"all,omitempty"`
}

// IdleResult is the hub at rest with every agent connected.
type IdleResult struct {
	Seconds    float64 `json:"seconds"`
	RSS        int64   `json:"rssBytes"`
	CPUPercent float64 `json:"cpuPercent"`
	Load       string  `json:"load"`
}

// WorksResult is scenario works.
type WorksResult struct {
	Templates    int       `json:"templates"`
	Works        int64     `json:"works"`
	ApplySeconds float64   `json:"applySeconds"`
	Acked        Latencies `json:"acked"`
	PeakRSS      int64     `json:"peakRssBytes"`
}

// ResyncResult is scenarios restart and storm.
type ResyncResult struct {
	HubStartSeconds float64   `json:"hubStartSeconds,omitempty"`
	JitterSeconds   float64   `json:"jitterSeconds,omitempty"`
	Synced          Latencies `json:"synced"`
	// UpsertsResent and BytesResent are the WorkUpserts (and their
	// protobuf bytes) the hub sent before SyncDone, over all agents.
	UpsertsResent int64 `json:"upsertsResent"`
	BytesResent   int64 `json:"bytesResent"`
}

// FlapResult is scenario flap.
type FlapResult struct {
	Fraction   float64   `json:"fraction"`
	Seconds    float64   `json:"seconds"`
	CPUPercent float64   `json:"cpuPercent"`
	Change     Latencies `json:"change"`
}

// latencies returns each at's distance from t0, seconds.
func latencies(t0 time.Time, at []int64) []float64 {
	out := make([]float64, len(at))
	for i, a := range at {
		out[i] = time.Duration(a - t0.UnixNano()).Seconds()
	}
	return out
}

// summarize sorts xs and returns their percentiles.
func summarize(xs []float64) Latencies {
	slices.Sort(xs)
	if len(xs) == 0 {
		return Latencies{}
	}
	return Latencies{N: len(xs), P50: quantile(xs, 0.5), P99: quantile(xs, 0.99), Max: xs[len(xs)-1], All: xs}
}

// quantile is the nearest-rank q-quantile of sorted xs.
func quantile(xs []float64, q float64) float64 {
	i := int(q*float64(len(xs))+0.5) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

func (r *Results) write(dir string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		return err
	}
	return writePlots(r, dir)
}

// Print writes the summary a reader wants.
func (r *Results) Print(w io.Writer) {
	fmt.Fprintf(w, "%d agents in %d workers (%s), load %s; enrolled in %.1f s, all synced: %s; all listed Ready after %.1f s\n",
		r.Agents, r.Workers, r.Enroll, r.Load, r.Enrolled, r.Connect, r.Registered)
	if r.Idle != nil {
		fmt.Fprintf(w, "idle: hub RSS %s, CPU %.1f%% over %.0f s (load %s)\n", mib(r.Idle.RSS), r.Idle.CPUPercent, r.Idle.Seconds, r.Idle.Load)
	}
	if r.FirstPlacement != nil {
		fmt.Fprintf(w, "first placement of one template: %s\n", r.FirstPlacement)
	}
	if r.Fanout != nil {
		fmt.Fprintf(w, "one change acked by all: %s\n", r.Fanout)
	}
	if x := r.Works; x != nil {
		fmt.Fprintf(w, "works: %d templates × %d agents = %d works; applied in %.1f s; all acked: %s; hub peak RSS %s\n",
			x.Templates, r.Agents, x.Works, x.ApplySeconds, x.Acked, mib(x.PeakRSS))
	}
	if x := r.Restart; x != nil {
		fmt.Fprintf(w, "hub kill -9 + restart (up in %.1f s): all resynced %s; resent %d upserts, %d bytes\n",
			x.HubStartSeconds, x.Synced, x.UpsertsResent, x.BytesResent)
	}
	if x := r.Storm; x != nil {
		fmt.Fprintf(w, "reconnect storm over %.0f s: all resynced %s; resent %d upserts, %d bytes\n",
			x.JitterSeconds, x.Synced, x.UpsertsResent, x.BytesResent)
	}
	if x := r.Fresh; x != nil {
		fmt.Fprintf(w, "every agent reinstalled (empty state) over %.0f s: all synced %s; sent %d upserts, %d bytes\n",
			x.JitterSeconds, x.Synced, x.UpsertsResent, x.BytesResent)
	}
	if x := r.Flap; x != nil {
		fmt.Fprintf(w, "%.1f%% flapping for %.0f s: hub CPU %.1f%%; a change meanwhile: %s\n",
			100*x.Fraction, x.Seconds, x.CPUPercent, x.Change)
	}
	if r.EtcdKeys > 0 {
		fmt.Fprintf(w, "etcd: %d keys, %s; by prefix: %v\n", r.EtcdKeys, mib(r.EtcdBytes), r.EtcdKeysByPrefix)
	}
	fmt.Fprintf(w, "hub peak RSS %s\n", mib(peakOf(r.Samples, "")))
	for _, e := range r.Errors {
		fmt.Fprintf(w, "agent error: %s\n", e)
	}
}

func (l Latencies) String() string {
	return fmt.Sprintf("n=%d p50 %.3f s, p99 %.3f s, max %.3f s (load %s)", l.N, l.P50, l.P99, l.Max, l.Load)
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
