package bind

import (
	"testing"
)

func claimOf(p *Policy, rv string) *Current {
	return &Current{Claim: &Claim{Policy: p.Ref, ID: p.ID}, ResourceVersion: rv}
}

func TestDecide(t *testing.T) {
	dep := deploy("prod/web", map[string]string{"app": "web"})
	cm := tmpl("v1", "Namespace", "prod", 10, nil) // cluster-scoped
	all := deploys(selAll("apps/v1", "Deployment"))
	named := deploys(selName("apps/v1", "Deployment", "prod", "web"))
	byLabel := deploys(selLabels("apps/v1", "Deployment", map[string]string{"app": "web"}))
	other := deploys(selLabels("apps/v1", "Deployment", map[string]string{"app": "api"}))

	ppLow := pol("prod/low", 1, all)
	ppHigh := pol("prod/high", 5, all)
	ppHighAlways := pol("prod/high-always", 5, named, always)
	ppEqAlways := pol("prod/eq-always", 1, named, always)
	ppLabel := pol("prod/b-label", 1, byLabel)
	ppName := pol("prod/c-name", 1, named)
	ppA := pol("prod/a", 1, all)
	ppGone := pol("prod/gone", 9, all, deleting)
	ppOther := pol("prod/other", 1, other)
	ppLazy := pol("prod/lazy", 1, all, lazy)
	ppNeedsOP := pol("prod/needs-op", 1, all, func(p *Policy) { p.Spec.DependentOverrides = []string{"op1"} })
	cppHigh := pol("c-high", 100, all)
	cppLow := pol("c-low", 1, all)
	cppAlways := pol("c-always", 50, deploys(selName("apps/v1", "Deployment", "prod", "web")), always)
	cppNs := pol("c-ns", 1, deploys(selAll("v1", "Namespace")))
	recreated := *ppLow
	recreated.ID = "id-new"
	changed := Cause{Policies: map[PolicyRef]bool{ppOther.Ref: true}}
	released := &Current{Released: true, ResourceVersion: "9"}

	cases := []struct {
		name       string
		in         Input
		want       Verdict
		wantPolicy *Policy
	}{
		{"no policy waits", Input{Template: dep}, Wait, nil},
		{"PP beats CPP of higher priority", Input{Template: dep, PPs: []*Policy{ppLow}, CPPs: []*Policy{cppHigh}}, Bind, ppLow},
		{"explicit priority first", Input{Template: dep, PPs: []*Policy{ppLow, ppHigh, ppName}}, Bind, ppHigh},
		{"then implicit priority", Input{Template: dep, PPs: []*Policy{ppA, ppLabel, ppName}}, Bind, ppName},
		{"label selector beats match-all", Input{Template: dep, PPs: []*Policy{ppA, ppLabel}}, Bind, ppLabel},
		{"then smaller name", Input{Template: dep, PPs: []*Policy{ppLow, ppA}}, Bind, ppA},
		{"deleting policy ignored", Input{Template: dep, PPs: []*Policy{ppGone, ppLow}}, Bind, ppLow},
		{"CPPs when no PP matches", Input{Template: dep, PPs: []*Policy{ppOther}, CPPs: []*Policy{cppLow, cppHigh}}, Bind, cppHigh},
		{"cluster-scoped: CPP only", Input{Template: cm, CPPs: []*Policy{cppNs}}, Bind, cppNs},
		{"claim kept against higher priority", Input{Template: dep, Current: claimOf(ppLow, "10"),
			PPs: []*Policy{ppLow, ppHigh}}, Bind, ppLow},
		{"CPP claim kept against a new PP without preemption", Input{Template: dep, Current: claimOf(cppLow, "10"),
			PPs: []*Policy{ppLow}, CPPs: []*Policy{cppLow}}, Bind, cppLow},
		{"claim of a deleted policy is dropped", Input{Template: dep, Current: claimOf(ppGone, "10"),
			PPs: []*Policy{ppGone, ppLow}}, Bind, ppLow},
		{"claim of a recreated policy is dropped", Input{Template: dep, Current: claimOf(ppLow, "10"),
			PPs: []*Policy{&recreated, ppHigh}}, Bind, ppHigh},
		{"claimed policy no longer matches after a template change: kept", Input{Template: dep,
			Current: claimOf(ppOther, "9"), PPs: []*Policy{ppOther, ppLow}}, Keep, nil},
		{"claimed policy changed and no longer matches: released", Input{Template: dep, Cause: changed,
			Current: claimOf(ppOther, "9"), PPs: []*Policy{ppOther, ppLow}}, Bind, ppLow},
		{"released with nothing else: binding kept without claim", Input{Template: dep, Cause: changed,
			Current: claimOf(ppOther, "9"), PPs: []*Policy{ppOther}}, Release, nil},
		{"claim of a deleted policy, nothing else: binding kept without claim", Input{Template: dep,
			Current: claimOf(ppGone, "10"), PPs: []*Policy{ppGone}}, Release, nil},
		{"released binding, still no policy: stays released", Input{Template: dep,
			Current: released, PPs: []*Policy{ppOther}}, Release, nil},
		{"claim of an undecodable policy with no last good value: kept, not moved", Input{Template: dep,
			Current: claimOf(ppOther, "9"), PPs: []*Policy{ppLow}, Undecodable: func(p PolicyRef) bool { return p == ppOther.Ref }}, Keep, nil},
		{"released binding taken over by a matching policy", Input{Template: dep,
			Current: released, PPs: []*Policy{ppOther, ppLow}}, Bind, ppLow},
		{"released binding, lazy policy, template older: stays released", Input{Template: tmpl("apps/v1", "Deployment", "prod/web", 3, nil),
			Current: released, PPs: []*Policy{ppLazy}}, Release, nil},
		{"preemption off", Input{Template: dep, Current: claimOf(ppLow, "10"),
			PPs: []*Policy{ppLow, ppHighAlways}}, Bind, ppLow},
		{"PP preempts lower PP", Input{Template: dep, Current: claimOf(ppLow, "10"), Preemption: true,
			PPs: []*Policy{ppLow, ppHighAlways}}, Bind, ppHighAlways},
		{"equal priority does not preempt", Input{Template: dep, Current: claimOf(ppLow, "10"), Preemption: true,
			PPs: []*Policy{ppLow, ppEqAlways}}, Bind, ppLow},
		{"Always without a name does not preempt", Input{Template: dep, Current: claimOf(ppLow, "10"), Preemption: true,
			PPs: []*Policy{ppLow, pol("prod/all-always", 9, all, always)}}, Bind, ppLow},
		{"PP preempts CPP whatever the priority", Input{Template: dep, Current: claimOf(cppHigh, "10"), Preemption: true,
			PPs: []*Policy{ppEqAlways}, CPPs: []*Policy{cppHigh}}, Bind, ppEqAlways},
		{"CPP preempts lower CPP", Input{Template: dep, Current: claimOf(cppLow, "10"), Preemption: true,
			CPPs: []*Policy{cppLow, cppAlways}}, Bind, cppAlways},
		{"CPP never preempts PP", Input{Template: dep, Current: claimOf(ppLow, "10"), Preemption: true,
			PPs: []*Policy{ppLow}, CPPs: []*Policy{cppAlways}}, Bind, ppLow},
		{"CPP does not preempt higher CPP", Input{Template: dep, Current: claimOf(cppHigh, "10"), Preemption: true,
			CPPs: []*Policy{cppHigh, cppAlways}}, Bind, cppHigh},
		{"lazy: unchanged template keeps binding", Input{Template: dep, Current: claimOf(ppLazy, "10"),
			PPs: []*Policy{ppLazy}, Cause: Cause{Policies: map[PolicyRef]bool{ppLazy.Ref: true}}}, Keep, nil},
		{"lazy: changed template refreshes", Input{Template: dep, Current: claimOf(ppLazy, "9"),
			PPs: []*Policy{ppLazy}}, Bind, ppLazy},
		{"lazy: template older than policy waits", Input{Template: tmpl("apps/v1", "Deployment", "prod/web", 3, nil),
			PPs: []*Policy{ppLazy}}, Wait, nil},
		{"lazy: template newer than policy binds", Input{Template: dep, PPs: []*Policy{ppLazy}}, Bind, ppLazy},
		{"dependent override missing: waits", Input{Template: dep, PPs: []*Policy{ppNeedsOP}}, Wait, nil},
		{"dependent override present: binds", Input{Template: dep, PPs: []*Policy{ppNeedsOP},
			OverrideExists: func(ns, name string) bool { return ns == "prod" && name == "op1" }}, Bind, ppNeedsOP},
		{"dependent override gone: claim kept", Input{Template: dep, Current: claimOf(ppNeedsOP, "9"),
			PPs: []*Policy{ppNeedsOP}}, Keep, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(c.in)
			if got.Verdict != c.want || got.Policy != c.wantPolicy {
				t.Errorf("Decide(%s) = %v; want %v %s", c.name, got, c.want, name(c.wantPolicy))
			}
		})
	}
}

func TestChoose(t *testing.T) {
	dep := deploy("prod/web", nil)
	all := deploys(selAll("apps/v1", "Deployment"))
	cases := []struct {
		name      string
		pps, cpps []*Policy
		want      string
	}{
		{"none", nil, nil, "<nil>"},
		{"PP of another namespace is not given", nil, []*Policy{pol("c", 0, all)}, "ClusterPropagationPolicy c"},
		{"PP of another namespace naming the template is ignored (as in Karmada)", []*Policy{pol("dev/x", 100, deploys(selName("apps/v1", "Deployment", "prod", "web")))},
			[]*Policy{pol("c", 0, all)}, "ClusterPropagationPolicy c"},
		{"name tie-break", []*Policy{pol("prod/zeta", 0, all), pol("prod/alpha", 0, all)}, nil, "PropagationPolicy prod/alpha"},
		{"all deleting", []*Policy{pol("prod/x", 0, all, deleting)}, []*Policy{pol("c", 0, all, deleting)}, "<nil>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := name(Choose(dep, c.pps, c.cpps)); got != c.want {
				t.Errorf("Choose(%s) = %v; want %v", c.name, got, c.want)
			}
		})
	}
}

func TestDecideSettlesUnderPreemption(t *testing.T) {
	// Whatever the claim, deciding again from the result changes nothing.
	dep := deploy("prod/web", nil)
	named := deploys(selName("apps/v1", "Deployment", "prod", "web"))
	pps := []*Policy{pol("prod/a", 1, named, always), pol("prod/b", 3, named, always), pol("prod/c", 3, named, always)}
	cpps := []*Policy{pol("x", 1, named, always), pol("y", 7, named, always)}
	for _, start := range append(append([]*Policy{}, pps...), cpps...) {
		t.Run(start.Ref.String(), func(t *testing.T) {
			in := Input{Template: dep, PPs: pps, CPPs: cpps, Preemption: true, Current: claimOf(start, "10")}
			first := Decide(in)
			in.Current = claimOf(first.Policy, "10")
			if again := Decide(in); again.Policy != first.Policy {
				t.Errorf("Decide(claimed by %s) = %v, then %v; want a fixed point", start.Ref, first, again)
			}
			want := pps[1] // the highest PP; c ties with b, so it keeps what it has
			if start == pps[2] {
				want = pps[2]
			}
			if first.Policy != want {
				t.Errorf("Decide(claimed by %s) = %v; want %s", start.Ref, first, want.Ref)
			}
		})
	}
}
