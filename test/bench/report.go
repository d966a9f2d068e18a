package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// karmada holds the baseline's recorded figures (shared/bench/
// karmada-baseline.md, default configuration, median of 3 runs and
// min–max), keyed variant/phase/milestone, in seconds.
var karmada = map[string]string{
	"duplicated/create/" + MClient:     "0.4 (0.4–6.4)",
	"duplicated/create/" + MExist:      "33.7 (27.7–37.8)",
	"duplicated/create/" + MReady:      "34.7 (30.9–38.9)",
	"duplicated/create/" + MAggregated: "35.0 (31.7–39.5)",
	"duplicated/update/" + MClient:     "3.6 (3.0–7.8)",
	"duplicated/update/" + MNewImage:   "20.8 (20.4–22.0)",
	"duplicated/update/" + MRolledOut:  "109.1 (109.1–109.2)",
	"duplicated/update/" + MAggRolled:  "112.1 (111.8–112.4)",
	"duplicated/delete/" + MGone:       "17.0 (17.0–17.3)",
	"divided/create/" + MClient:        "0.9 (0.4–1.0)",
	"divided/create/" + MExist:         "33.5 (33.3–35.7)",
	"divided/create/" + MReady:         "34.6 (34.4–36.4)",
	"divided/create/" + MAggregated:    "34.8 (34.7–36.5)",
	"divided/delete/" + MGone:          "16.8 (16.8–16.8)",
}

// karmadaCost is the baseline's control-plane cost per variant/phase:
// CPU-seconds of the 7 control-plane processes and 3 agents, one agent's
// CPU-seconds, and one agent's peak RSS in MB, and the sum of the 7 control-plane
// processes' peak RSS in MB.
var karmadaCost = map[string]string{
	"duplicated/create": "33.8 / 2.1 / 97 / 1,710",
	"divided/create":    "29.7 / 1.8 / 99 / 1,682",
	"duplicated/update": "82.7 / 4.5 / 100 / 1,664",
}

// MClient names the client's own writing time in the tables.
const MClient = "client finished writing"

// Table renders the results as Markdown: the milestones (tether, the
// direct limit, Karmada's recorded figures, ratios), the cost per phase,
// and the Apply latencies.
func (r *Results) Table() string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "%d Deployments × %d clusters (%d kwok nodes each), %d run(s); seconds from t0, median (min–max); load average %s before, %s after.\n\n",
		c.Deployments, c.Clusters, c.Nodes, c.Runs, r.LoadBefore, r.LoadAfter)
	b.WriteString("| variant | phase | milestone | Tether | direct limit | Karmada (recorded) | Tether / limit | Tether / Karmada |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, v := range c.Variants {
		for _, ph := range []string{PhaseCreate, PhaseUpdate, PhaseDelete} {
			for _, m := range r.milestoneNames(v.Name, ph) {
				ours := r.times(ModeTether, v.Name, ph, m)
				limit := r.times(ModeDirect, v.Name, ph, m)
				k := karmada[v.Name+"/"+ph+"/"+m]
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", v.Name, ph, m,
					spread(ours), spread(limit), or(k, "—"), ratio(ours, limit), ratio(ours, karmadaMedian(k)))
			}
		}
	}
	b.WriteString("\nCost per phase, median (min–max): CPU-seconds, peak RSS in MB within the phase, the hub store's writes (revision delta).\n\n")
	b.WriteString("| variant | phase | mode | hub CPU s | hub peak MB | agent CPU s (each) | agent peak MB (max) | hub writes | members' CPU s | machine busy | Karmada: control plane + agents CPU s / agent CPU s / agent MB / control plane MB (sum) |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, v := range c.Variants {
		for _, ph := range []string{PhaseCreate, PhaseUpdate, PhaseDelete} {
			for _, mode := range []string{ModeTether, ModeDirect} {
				ps := r.phases(mode, v.Name, ph)
				if len(ps) == 0 {
					continue
				}
				k := "—"
				if mode == ModeTether {
					k = or(karmadaCost[v.Name+"/"+ph], "—")
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", v.Name, ph, mode,
					dash(mode, spread(r.cpu(ps, GroupHub, ""))), dash(mode, spread(r.peak(ps, GroupHub))),
					dash(mode, r.agentCPU(ps)), dash(mode, spread(r.peak(ps, GroupAgent))),
					dash(mode, spreadInt(ps)), spread(r.cpu(ps, GroupMembers, "")), busy(ps), k)
			}
		}
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "\nFailed (left out of the tables): %s\n", f)
	}
	b.WriteString("\nApply latency on the hub (sequential, one object per Apply):\n\n")
	b.WriteString("| when | n | p50 | p99 |\n| --- | --- | --- | --- |\n")
	fmt.Fprintf(&b, "| idle hub, before the runs | %s |\n", pcts(r.IdleApplies))
	for _, ph := range []string{PhaseCreate, PhaseUpdate, PhaseDelete} {
		var all []time.Duration
		for _, p := range r.Phases {
			if p.Mode == ModeTether && p.Phase == ph {
				all = append(all, p.Applies...)
			}
		}
		what := "Apply"
		if ph == PhaseDelete {
			what = "Delete"
		}
		if len(all) > 0 {
			fmt.Fprintf(&b, "| %s of a template during %s (fleet busy) | %s |\n", what, ph, pcts(all))
		}
	}
	return b.String()
}

// milestoneNames lists a phase's milestones in order, the client's first.
func (r *Results) milestoneNames(variant, phase string) []string {
	for _, p := range r.Phases {
		if p.Mode == ModeTether && p.Variant == variant && p.Phase == phase {
			names := []string{MClient}
			for _, m := range p.Reached {
				names = append(names, m.Name)
			}
			return names
		}
	}
	return nil
}

func (r *Results) phases(mode, variant, phase string) []Phase {
	var out []Phase
	for _, p := range r.Phases {
		if p.Mode == mode && p.Variant == variant && p.Phase == phase && p.Err == "" {
			out = append(out, p)
		}
	}
	return out
}

// times lists a milestone's time (s) in every run of mode.
func (r *Results) times(mode, variant, phase, milestone string) []float64 {
	var out []float64
	for _, p := range r.phases(mode, variant, phase) {
		if milestone == MClient {
			out = append(out, p.ClientDone.Seconds())
			continue
		}
		for _, m := range p.Reached {
			if m.Name == milestone {
				out = append(out, m.After.Seconds())
			}
		}
	}
	return out
}

// cpu sums, per run, the CPU of group's processes (or of the one named).
func (r *Results) cpu(ps []Phase, group, name string) []float64 {
	var out []float64
	for _, p := range ps {
		sum := 0.0
		for _, u := range p.Usage {
			if u.Group == group && (name == "" || u.Name == name) {
				sum += u.CPU
			}
		}
		out = append(out, sum)
	}
	return out
}

// peak is, per run, the largest peak RSS among group's processes.
func (r *Results) peak(ps []Phase, group string) []float64 {
	var out []float64
	for _, p := range ps {
		top := 0.0
		for _, u := range p.Usage {
			if u.Group == group {
				top = max(top, u.PeakMB)
			}
		}
		out = append(out, top)
	}
	return out
}

// agentCPU is each agent's median CPU over the runs, "a / b / c".
func (r *Results) agentCPU(ps []Phase) string {
	if len(ps) == 0 {
		return "—"
	}
	var parts []string
	for _, u := range ps[0].Usage {
		if u.Group == GroupAgent {
			parts = append(parts, fmt.Sprintf("%.1f", median(r.cpu(ps, GroupAgent, u.Name))))
		}
	}
	return strings.Join(parts, " / ")
}

func spreadInt(ps []Phase) string {
	var vs []float64
	for _, p := range ps {
		vs = append(vs, float64(p.HubWrites))
	}
	if len(vs) == 0 {
		return "—"
	}
	s := slices.Sorted(slices.Values(vs))
	if len(s) == 1 {
		return fmt.Sprintf("%.0f", s[0])
	}
	return fmt.Sprintf("%.0f (%.0f–%.0f)", median(vs), s[0], s[len(s)-1])
}

func busy(ps []Phase) string {
	var vs []float64
	for _, p := range ps {
		vs = append(vs, 100*p.MachineBusy)
	}
	if len(vs) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", median(vs))
}

// spread is "median (min–max)" of vs, one decimal; "—" for none.
func spread(vs []float64) string {
	if len(vs) == 0 {
		return "—"
	}
	s := slices.Sorted(slices.Values(vs))
	if len(s) == 1 {
		return fmt.Sprintf("%.1f", s[0])
	}
	return fmt.Sprintf("%.1f (%.1f–%.1f)", median(s), s[0], s[len(s)-1])
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(vs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratio is median(a)/median(b) with two decimals, "—" when either is
// missing or b is zero.
func ratio(a, b []float64) string {
	if len(a) == 0 || len(b) == 0 || median(b) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", median(a)/median(b))
}

// karmadaMedian is the median of a recorded "m (min–max)" cell.
func karmadaMedian(cell string) []float64 {
	var m float64
	if _, err := fmt.Sscanf(cell, "%g", &m); err != nil {
		return nil
	}
	return []float64{m}
}

// pcts is "n | p50 | p99" of ds in milliseconds.
func pcts(ds []time.Duration) string {
	if len(ds) == 0 {
		return "0 | — | —"
	}
	s := slices.Sorted(slices.Values(ds))
	at := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	return fmt.Sprintf("%d | %s | %s", len(s), ms(at(0.50)), ms(at(0.99)))
}

func dash(mode, s string) string {
	if mode == ModeDirect {
		return "—"
	}
	return s
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Write stores the table as bench.md and the raw results as results.json
// in dir.
func (r *Results) Write(dir string) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), raw, 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.md"), []byte(r.Table()), 0o644); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}
