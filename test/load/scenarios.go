package load

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Scenario names, in the order a full run takes them.
const (
	// ScenarioIdle: every agent connected; hub RSS and CPU over Config.Idle.
	ScenarioIdle = "idle"
	// ScenarioFanout: one template, Duplicated to every agent, changes;
	// the time until every agent has applied (and acked) the change.
	ScenarioFanout = "fanout"
	// ScenarioWorks: Config.WorksPerAgent templates, each Duplicated to
	// every agent, are created; the time until every agent holds them all.
	ScenarioWorks = "works"
	// ScenarioRestart: the hub is killed with SIGKILL and started again;
	// the time until every agent has synced again, and what the hub sent
	// them (unchanged works must not be resent).
	ScenarioRestart = "restart"
	// ScenarioStorm: every agent restarts its client at a random point of
	// Config.StormJitter; the time until all have synced again, and what
	// was resent.
	ScenarioStorm = "storm"
	// ScenarioFresh: every agent restarts with an empty state (a
	// reinstalled agent) within Config.StormJitter: the time until all
	// have synced again and what the hub sent them, every work they hold.
	ScenarioFresh = "fresh"
	// ScenarioFlap: Config.FlapFraction of the agents go down and up for
	// Config.Flap while one template changes; hub CPU, and the change's
	// fan-out.
	ScenarioFlap = "flap"
)

// Scenarios are all scenarios, in the order a full run takes them.
var Scenarios = []string{ScenarioIdle, ScenarioFanout, ScenarioWorks, ScenarioRestart, ScenarioStorm, ScenarioFresh, ScenarioFlap}

// applyBatch is how many templates one Apply carries.
const applyBatch = 100

// selectorLabel marks the templates the load policy places.
const selectorLabel = "load.tether.io/template"

// policy places every labelled ConfigMap on every cluster.
const policy = `apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: load, namespace: default}
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    labelSelector: {matchLabels: {"` + selectorLabel + `": "yes"}}
  placement:
    replicaScheduling: {replicaSchedulingType: Duplicated}
`

// template is the ConfigMap name at generation gen.
func template(name string, gen int) string {
	return fmt.Sprintf(`---
apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: default
  labels: {"%s": "yes"}
  annotations: {"%s": "%d"}
data: {payload: "%s"}
`, name, selectorLabel, GenAnnotation, gen, strings.Repeat("x", 256))
}

func (d *driver) applyPolicy(ctx context.Context) error {
	_, err := d.admin.Apply(ctx, []byte(policy))
	return err
}

// applyTemplates applies templates names at a new generation, which it
// returns, after telling the workers to expect count works of it.
func (d *driver) applyTemplates(ctx context.Context, names []string, count int) (gen int, t0 time.Time, err error) {
	d.gen++
	gen = d.gen
	if err := d.send(Command{Op: CmdExpect, Gen: gen, Count: count}); err != nil {
		return 0, t0, err
	}
	t0 = time.Now()
	for i := 0; i < len(names); i += applyBatch {
		var b strings.Builder
		for _, n := range names[i:min(i+applyBatch, len(names))] {
			b.WriteString(template(n, gen))
		}
		if _, err := d.admin.Apply(ctx, []byte(b.String())); err != nil {
			return 0, t0, err
		}
	}
	return gen, t0, nil
}

func (d *driver) scenario(ctx context.Context, name string) error {
	switch name {
	case ScenarioIdle:
		return d.idle(ctx)
	case ScenarioFanout:
		return d.fanout(ctx)
	case ScenarioWorks:
		return d.works(ctx)
	case ScenarioRestart:
		return d.restart(ctx)
	case ScenarioStorm:
		return d.storm(ctx)
	case ScenarioFresh:
		return d.fresh(ctx)
	case ScenarioFlap:
		return d.flap(ctx)
	}
	return fmt.Errorf("unknown scenario %q (want %s)", name, strings.Join(Scenarios, ", "))
}

func (d *driver) idle(ctx context.Context) error {
	start, err := readUsage(d.hub.pid())
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d.cfg.Idle):
	}
	end, err := readUsage(d.hub.pid())
	if err != nil {
		return err
	}
	d.res.Idle = &IdleResult{Seconds: d.cfg.Idle.Seconds(), RSS: end.RSS,
		CPUPercent: 100 * (end.CPU - start.CPU).Seconds() / d.cfg.Idle.Seconds(), Load: loadAvg()}
	return nil
}

// fanoutTemplate is the template scenarios fanout and flap change.
const fanoutTemplate = "load-fanout"

func (d *driver) fanout(ctx context.Context) error {
	first, err := d.change(ctx)
	if err != nil {
		return err
	}
	d.res.FirstPlacement = first
	change, err := d.change(ctx)
	if err != nil {
		return err
	}
	d.res.Fanout = change
	return nil
}

// change applies fanoutTemplate at a new generation and measures how
// long each agent takes to hold it.
func (d *driver) change(ctx context.Context) (*Latencies, error) {
	gen, t0, err := d.applyTemplates(ctx, []string{fanoutTemplate}, 1)
	if err != nil {
		return nil, err
	}
	at, err := d.waitGen(ctx, gen)
	if err != nil {
		return nil, err
	}
	l := summarize(latencies(t0, at))
	l.Load = loadAvg()
	return &l, nil
}

func (d *driver) works(ctx context.Context) error {
	names := make([]string, d.cfg.WorksPerAgent)
	for i := range names {
		names[i] = fmt.Sprintf("load-w-%05d", i)
	}
	gen, t0, err := d.applyTemplates(ctx, names, len(names))
	if err != nil {
		return err
	}
	applied := time.Since(t0)
	at, err := d.waitGen(ctx, gen)
	if err != nil {
		return err
	}
	l := summarize(latencies(t0, at))
	l.Load = loadAvg()
	d.res.Works = &WorksResult{Templates: len(names), Works: int64(len(names)) * int64(d.cfg.Agents),
		ApplySeconds: applied.Seconds(), Acked: l, PeakRSS: d.sampler.peak(ScenarioWorks)}
	return nil
}

func (d *driver) restart(ctx context.Context) error {
	if err := d.hub.kill9(); err != nil {
		return fmt.Errorf("kill the hub: %w", err)
	}
	t0 := time.Now()
	if err := d.hub.start(ctx); err != nil {
		return fmt.Errorf("restart the hub: %w", err)
	}
	started := time.Since(t0)
	r, err := d.resync(ctx, t0)
	if err != nil {
		return err
	}
	r.HubStartSeconds = started.Seconds()
	d.res.Restart = r
	return nil
}

func (d *driver) storm(ctx context.Context) (err error) {
	d.res.Storm, err = d.reconnect(ctx, false)
	return err
}

func (d *driver) fresh(ctx context.Context) (err error) {
	d.res.Fresh, err = d.reconnect(ctx, true)
	return err
}

// reconnect restarts every agent's client within Config.StormJitter, with
// an empty state when forget, and measures the resync.
func (d *driver) reconnect(ctx context.Context, forget bool) (*ResyncResult, error) {
	t0 := time.Now()
	if err := d.send(Command{Op: CmdRestart, Fraction: 1, JitterMS: d.cfg.StormJitter.Milliseconds(), Forget: forget}); err != nil {
		return nil, err
	}
	r, err := d.resync(ctx, t0)
	if err != nil {
		return nil, err
	}
	r.JitterSeconds = d.cfg.StormJitter.Seconds()
	return r, nil
}

// resync waits until every agent has synced since t0 and sums what the
// hub sent them before SyncDone.
func (d *driver) resync(ctx context.Context, t0 time.Time) (*ResyncResult, error) {
	syncs, err := d.waitSynced(ctx, t0)
	if err != nil {
		return nil, err
	}
	r := &ResyncResult{Synced: summarize(latencies(t0, atOf(syncs)))}
	for _, s := range syncs {
		r.UpsertsResent += s.Upserts
		r.BytesResent += s.Bytes
	}
	r.Synced.Load = loadAvg()
	return r, nil
}

func (d *driver) flap(ctx context.Context) error {
	before, err := readUsage(d.hub.pid())
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := d.send(Command{Op: CmdFlap, Fraction: d.cfg.FlapFraction,
		DownMS: d.cfg.FlapDown.Milliseconds(), UpMS: d.cfg.FlapUp.Milliseconds()}); err != nil {
		return err
	}
	// The change goes out halfway through, while agents come and go.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d.cfg.Flap / 2):
	}
	change, err := d.change(ctx)
	if err != nil {
		return err
	}
	if rest := d.cfg.Flap - time.Since(t0); rest > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rest):
		}
	}
	if err := d.send(Command{Op: CmdStopFlap}); err != nil {
		return err
	}
	after, err := readUsage(d.hub.pid())
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	d.res.Flap = &FlapResult{Fraction: d.cfg.FlapFraction, Seconds: secs, Change: *change,
		CPUPercent: 100 * (after.CPU - before.CPU).Seconds() / secs}
	return nil
}
