package load

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot files in the run's directory.
const (
	CDFPlot    = "latency-cdf.png"
	MemoryPlot = "hub-memory.png"
)

// writePlots draws the latency CDFs and the hub's memory over time.
func writePlots(r *Results, dir string) error {
	if err := plotCDFs(r, filepath.Join(dir, CDFPlot)); err != nil {
		return fmt.Errorf("plot %s: %w", CDFPlot, err)
	}
	if err := plotMemory(r, filepath.Join(dir, MemoryPlot)); err != nil {
		return fmt.Errorf("plot %s: %w", MemoryPlot, err)
	}
	return nil
}

func plotCDFs(r *Results, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("tether-load: %d agents, time until each agent has it", r.Agents)
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "fraction of agents"
	var lines []any
	add := func(name string, l *Latencies) {
		if l != nil && len(l.All) > 0 {
			lines = append(lines, name, cdf(l.All))
		}
	}
	add("first connect", &r.Connect)
	add("one change (fanout)", r.Fanout)
	if r.Works != nil {
		add(fmt.Sprintf("%d works each", r.Works.Templates), &r.Works.Acked)
	}
	if r.Restart != nil {
		add("resync after kill -9", &r.Restart.Synced)
	}
	if r.Storm != nil {
		add("reconnect storm", &r.Storm.Synced)
	}
	if r.Fresh != nil {
		add("reinstalled agents' full sync", &r.Fresh.Synced)
	}
	if r.Flap != nil {
		add("change while flapping", &r.Flap.Change)
	}
	if err := plotutil.AddLines(p, lines...); err != nil {
		return err
	}
	p.Legend.Top = false
	p.Legend.Left = false
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

// cdf is the empirical CDF of sorted xs.
func cdf(xs []float64) plotter.XYs {
	pts := make(plotter.XYs, len(xs))
	for i, x := range xs {
		pts[i] = plotter.XY{X: x, Y: float64(i+1) / float64(len(xs))}
	}
	return pts
}

func plotMemory(r *Results, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("tether-hub RSS, %d agents", r.Agents)
	p.X.Label.Text = "seconds since start"
	p.Y.Label.Text = "MiB"
	// One line per phase, so the legend says which scenario ran when.
	var lines []any
	var cur plotter.XYs
	phase := ""
	flush := func() {
		if len(cur) > 0 {
			lines = append(lines, phase, cur)
		}
	}
	for _, s := range r.Samples {
		if s.Phase != phase {
			flush()
			cur, phase = nil, s.Phase
		}
		cur = append(cur, plotter.XY{X: s.T, Y: float64(s.RSS) / (1 << 20)})
	}
	flush()
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	p.Legend.Top = true
	p.Legend.Left = true
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
