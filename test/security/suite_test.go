package security

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// attack is one hostile input of the suite. run makes the attack and fails
// t unless the hub refused or contained it; it returns the outcome for the
// report, e.g. "refused InvalidArgument" or "contained: data hidden".
type attack struct {
	name string
	run  func(t *testing.T, e *hostileEnv) string
}

// runAttacks runs each attack as a subtest of t against e (runAttack),
// in order, then logs the table of their figures.
func runAttacks(t *testing.T, e *hostileEnv, attacks []attack) {
	t.Helper()
	var rows []row
	var applies, heartbeats []time.Duration
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			rw, p := e.runAttack(t, a)
			rows = append(rows, rw)
			applies, heartbeats = append(applies, p.applies...), append(heartbeats, p.heartbeats...)
		})
	}
	var b strings.Builder
	writeTable(&b, rows)
	t.Logf("%d attacks; latencies p50 / p99 / max in ms, hub memory in MiB:\n%s", len(rows), b.String())
	t.Logf("all %d attacks: apply %s ms (%d calls), heartbeat %s ms (%d)", len(rows),
		summarize(applies).ms(), len(applies), summarize(heartbeats).ms(), len(heartbeats))
}

// runAttack makes attack a against e while a probe applies and heartbeats
// (probe_test.go); afterwards it checks that every probe call succeeded
// and every probe apply is still there, and that the hub still serves
// (checkServing). It records the attack's figures in the report. Time is
// measured, never asserted.
func (e *hostileEnv) runAttack(t *testing.T, a attack) (row, *probe) {
	e.attacks++
	before, _, err := procMemory(e.h.p.PID())
	if err != nil {
		t.Fatal(err)
	}
	p := e.startProbe(fmt.Sprintf("a%d", e.attacks))
	stop := sync.OnceValue(p.stop)
	defer stop() // also when the attack fails the test
	start := time.Now()
	outcome := a.run(t, e)
	took := time.Since(start)
	stop()
	for _, err := range p.errs {
		t.Errorf("probe during %q: %v", a.name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	if lost, err := p.lostApplies(ctx); err != nil || len(lost) > 0 {
		t.Errorf("probe applies lost during %q: %v (%v); want all %d readable", a.name, lost, err, len(p.applied))
	}
	e.checkServing(t)
	after, peak, err := procMemory(e.h.p.PID())
	if err != nil {
		t.Fatal(err)
	}
	rw := row{Test: strings.Split(t.Name(), "/")[0], Attack: a.name, Outcome: outcome, AttackMs: ms(took),
		Probes: len(p.applies), During: p.during, Apply: summarize(p.applies).ms(), Heartbeat: summarize(p.heartbeats).ms(),
		Memory: memory{RSSBeforeKiB: before, RSSAfterKiB: after, PeakKiB: peak}}
	if t.Failed() {
		rw.Outcome = "FAILED: " + outcome
	}
	t.Logf("%s: %s in %.1f ms; probes %d (%d during): apply %s ms, heartbeat %s ms; hub %s MiB",
		a.name, outcome, rw.AttackMs, rw.Probes, rw.During, rw.Apply, rw.Heartbeat, rw.Memory)
	suiteReport.add(rw, p)
	return rw, p
}

// attack is the attack of a hostileCase: its call must be refused with
// the case's code and a message holding every string of its want.
func (c hostileCase) attack() attack {
	return attack{name: c.name, run: func(t *testing.T, e *hostileEnv) string {
		err := c.call(t, e)
		if err == nil {
			t.Fatalf("%s: accepted; want refused", c.name)
		}
		code, msg := refusal(err)
		t.Logf("%s → %s: %.400s", c.name, code, msg)
		if code != c.code {
			t.Errorf("%s: code %s (%.300s); want %s", c.name, code, msg, c.code)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %.500q; want it to say %q", c.name, msg, w)
			}
		}
		if code == codes.OK {
			return "rejected per object, nothing stored"
		}
		return "refused " + code.String()
	}}
}

func attacksOf(cases []hostileCase) []attack {
	out := make([]attack, len(cases))
	for i, c := range cases {
		out[i] = c.attack()
	}
	return out
}
