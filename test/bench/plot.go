package bench

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot size, in inches.
const (
	plotWidth  = 8 * vg.Inch
	plotHeight = 5 * vg.Inch
)

// Plot writes, for each variant and mode, a PNG of the create phase's
// per-cluster CDFs of the time to exist and to be ready (the run with the
// median time to all ready) into dir, and returns the files' paths.
func (r *Results) Plot(dir string) ([]string, error) {
	var paths []string
	for _, v := range r.Config.Variants {
		for _, mode := range []string{ModeTether, ModeDirect} {
			p, ok := medianRun(r.phases(mode, v.Name, PhaseCreate))
			if !ok {
				continue
			}
			path := filepath.Join(dir, fmt.Sprintf("cdf-%s-%s.png", v.Name, mode))
			title := fmt.Sprintf("%s, %s: %d Deployments, run %d", mode, v.Name, r.Config.Deployments, p.Run)
			if err := plotCDF(path, title, p); err != nil {
				return paths, err
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}

// medianRun is the phase whose time to all ready is the median.
func medianRun(ps []Phase) (Phase, bool) {
	if len(ps) == 0 {
		return Phase{}, false
	}
	ready := func(p Phase) time.Duration {
		for _, m := range p.Reached {
			if m.Name == MReady {
				return m.After
			}
		}
		return 0
	}
	s := slices.SortedFunc(slices.Values(ps), func(a, b Phase) int { return int(ready(a) - ready(b)) })
	return s[len(s)/2], true
}

// plotCDF draws one line per cluster and milestone (exist dashed, ready
// solid).
func plotCDF(path, title string, p Phase) error {
	pl := plot.New()
	pl.Title.Text = title
	pl.X.Label.Text = "seconds from t0"
	pl.Y.Label.Text = "fraction of the cluster's Deployments"
	pl.Y.Min, pl.Y.Max = 0, 1
	pl.Legend.Top, pl.Legend.Left = false, false
	for _, m := range p.Reached {
		if m.Name != MExist && m.Name != MReady {
			continue
		}
		clusters := slices.Sorted(func(yield func(string) bool) {
			for c := range m.PerSource {
				if !yield(c) {
					return
				}
			}
		})
		for i, c := range clusters {
			line, err := plotter.NewLine(cdf(m.PerSource[c]))
			if err != nil {
				return fmt.Errorf("plot %s: %w", path, err)
			}
			line.Color = plotutil.Color(i)
			line.Width = vg.Points(1.5)
			what := "ready"
			if m.Name == MExist {
				line.Dashes = plotutil.Dashes(2)
				what = "exists"
			}
			pl.Add(line)
			pl.Legend.Add(c+" "+what, line)
		}
	}
	pl.Add(plotter.NewGrid())
	if err := pl.Save(plotWidth, plotHeight, path); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

// cdf is the empirical CDF of ds as a step line.
func cdf(ds []time.Duration) plotter.XYs {
	pts := make(plotter.XYs, 0, 2*len(ds)+1)
	pts = append(pts, plotter.XY{X: 0, Y: 0})
	n := float64(len(ds))
	for i, d := range ds {
		x := d.Seconds()
		pts = append(pts, plotter.XY{X: x, Y: float64(i) / n}, plotter.XY{X: x, Y: float64(i+1) / n})
	}
	return pts
}
