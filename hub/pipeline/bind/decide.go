package bind

import (
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/internal/overrides"
)

// Claim is the policy a stored binding records as its owner.
type Claim struct {
	Policy PolicyRef
	// ID is the policy's permanent ID when the claim was made.
	ID string
}

// Current is what the stored binding says about a template; nil when the
// template has no binding.
type Current struct {
	// Claim is nil for an attached binding (a dependency only).
	Claim *Claim
	// ResourceVersion is the template revision the binding was built from.
	ResourceVersion string
	// Released is true for a binding that has its own placement and no
	// claim: its policy was deleted or stopped matching, and it keeps
	// propagating (Karmada keeps the binding) until a policy takes it.
	Released bool
	// Auto is true for a Namespace's binding that auto-propagation owns
	// (no claim, LabelAutoPropagated).
	Auto bool
}

// owned reports whether the template has a binding of its own (claimed,
// released or auto-propagated), as opposed to none or an attached one (a
// dependency only).
func (c *Current) owned() bool {
	return c != nil && (c.Claim != nil || c.Released || c.Auto)
}

// Cause says why a template is being reconciled.
type Cause struct {
	// Policies holds the policies that changed (created, updated, deleted).
	// Only a change of the claiming policy itself releases a template it no
	// longer matches (spec §2.3); a template change does not (§2.2).
	Policies map[PolicyRef]bool
}

// Verdict is what to do with a template's binding.
type Verdict int

// Verdicts.
const (
	// Wait: no policy applies; the template has no binding of its own.
	Wait Verdict = iota
	// Bind: (re)build the binding from Decision.Policy.
	Bind
	// Keep: leave the binding's policy part as it is.
	Keep
	// Release: no policy applies any more, but the template has a binding
	// of its own: drop the claim and keep the rest (placement, clusters),
	// so that its works and member objects stay. Karmada v1.18 does the
	// same when a policy is deleted or stops matching; a matching policy
	// takes the binding over later.
	Release
	// AutoPropagate: a Namespace no policy claims goes to every cluster
	// (namespace auto-propagation, Karmada's namespace controller).
	AutoPropagate
)

func (v Verdict) String() string {
	return [...]string{"Wait", "Bind", "Keep", "Release", "AutoPropagate"}[v]
}

// Decision is the outcome of Decide.
type Decision struct {
	Verdict Verdict
	// Policy is set for Bind.
	Policy *Policy
	// Reason says why, for logs and tests.
	Reason string
}

// Input is everything Decide looks at.
type Input struct {
	Template *Template
	Current  *Current
	// PPs are the PropagationPolicies of the template's namespace (none for a
	// cluster-scoped template); CPPs are all ClusterPropagationPolicies.
	PPs, CPPs []*Policy
	// OverrideExists reports whether the OverridePolicy namespace/name (or,
	// with namespace empty, the ClusterOverridePolicy name) exists.
	OverrideExists func(namespace, name string) bool
	Cause          Cause
	// Preemption enables `preemption: Always`.
	Preemption bool
	// Undecodable reports whether a policy's stored value does not decode
	// (nil: none). A claim on such a policy with no last good value is
	// kept as it is: a decode error is never taken as a deleted policy.
	Undecodable func(PolicyRef) bool
	// AutoNamespace is true for a Namespace template that auto-propagation
	// places when no ClusterPropagationPolicy applies (Filter.AutoPropagated).
	AutoNamespace bool
}

// Decide chooses the policy for a template (spec §2.2, §2.3): the claiming
// policy while it exists (unless a preemptor takes the template), else the
// best matching policy; then dependentOverrides and Lazy may hold the
// change back, in which case a still valid claim is kept and otherwise the
// template waits. A template that would wait but has a binding of its own
// (its policy was deleted or stopped matching) is released: it keeps the
// binding without a claim, and so its placement, never unbound by a
// policy change. A Namespace that would wait is auto-propagated instead
// when in.AutoNamespace: a ClusterPropagationPolicy that matches it wins,
// auto-propagation takes what no policy places.
func Decide(in Input) Decision {
	d := decide(in)
	switch {
	case d.Verdict != Wait:
		return d
	case in.AutoNamespace:
		return Decision{Verdict: AutoPropagate, Reason: d.Reason + "; namespace auto-propagated to every cluster"}
	case in.Current.owned():
		return Decision{Verdict: Release, Reason: d.Reason + "; binding kept without a claim"}
	}
	return d
}

func decide(in Input) Decision {
	claimed := claimedPolicy(in)
	if claimed == nil && in.Current != nil && in.Current.Claim != nil && in.Undecodable != nil && in.Undecodable(in.Current.Claim.Policy) {
		return Decision{Verdict: Keep, Reason: "claiming policy does not decode; claim and binding kept"}
	}
	var pre *Policy
	if claimed != nil && in.Preemption {
		pre = preemptor(in, claimed)
	}
	var d Decision
	switch {
	case claimed == nil:
		d = choose(in, "matched")
	case pre != nil:
		d = Decision{Verdict: Bind, Policy: pre, Reason: "preempted " + claimed.Ref.String()}
	case overrides.MatchesResource(in.Template.Obj, claimed.Spec.ResourceSelectors...):
		d = Decision{Verdict: Bind, Policy: claimed, Reason: "claimed"}
	case !in.Cause.Policies[claimed.Ref]:
		return Decision{Verdict: Keep, Reason: "claiming policy no longer matches; claim kept"}
	default:
		d = choose(in, "released by "+claimed.Ref.String())
	}
	if d.Verdict != Bind {
		return d
	}
	if why := held(in, d.Policy); why != "" {
		if claimed != nil {
			return Decision{Verdict: Keep, Reason: why}
		}
		return Decision{Verdict: Wait, Reason: why}
	}
	return d
}

// claimedPolicy is the live policy of the current claim, nil when there is
// no claim or its policy is gone, recreated or being deleted.
func claimedPolicy(in Input) *Policy {
	if in.Current == nil || in.Current.Claim == nil {
		return nil
	}
	c := in.Current.Claim
	list := in.PPs
	if c.Policy.Cluster {
		list = in.CPPs
	}
	for _, p := range list {
		if p.Ref == c.Policy && p.ID == c.ID && !p.Deleting {
			return p
		}
	}
	return nil
}

func choose(in Input, reason string) Decision {
	if p := Choose(in.Template, in.PPs, in.CPPs); p != nil {
		return Decision{Verdict: Bind, Policy: p, Reason: reason}
	}
	return Decision{Verdict: Wait, Reason: "no matching policy"}
}

// Choose is the policy an unclaimed template goes to: the best matching
// PropagationPolicy, or when none matches the best matching
// ClusterPropagationPolicy, or nil. Deleting policies are ignored.
func Choose(t *Template, pps, cpps []*Policy) *Policy {
	if t.Obj.GetNamespace() != "" {
		if p := best(t, pps, false); p != nil {
			return p
		}
	}
	return best(t, cpps, false)
}

// best is the highest matching policy of list by explicit priority,
// implicit priority, then smaller name; with named, only policies with
// `preemption: Always` whose selectors name t count. A PropagationPolicy
// selects only templates of its own namespace, whatever its selectors
// say (as in Karmada), so that no namespace places another's templates.
func best(t *Template, list []*Policy, named bool) *Policy {
	var top *Policy
	var topImplicit overrides.Priority
	for _, p := range list {
		if p.Deleting || (!p.Ref.Cluster && p.Ref.Namespace != t.Obj.GetNamespace()) {
			continue
		}
		implicit := overrides.ResourcePriority(t.Obj, p.Spec.ResourceSelectors...)
		if implicit == overrides.PriorityMismatch {
			continue
		}
		if named && (p.Spec.PreemptionPolicy() != policyv1alpha1.PreemptAlways ||
			!namesTemplate(p.Spec.ResourceSelectors, t.Obj)) {
			continue
		}
		if top == nil || better(p, implicit, top, topImplicit) {
			top, topImplicit = p, implicit
		}
	}
	return top
}

func better(p *Policy, pi overrides.Priority, q *Policy, qi overrides.Priority) bool {
	if p.priority() != q.priority() {
		return p.priority() > q.priority()
	}
	if pi != qi {
		return pi > qi
	}
	return p.Ref.Name < q.Ref.Name
}

// preemptor is the policy that takes t from claimed by preemption (spec
// §2.3), or nil: a PropagationPolicy with `preemption: Always` naming t
// takes it from a ClusterPropagationPolicy whatever the priorities and from
// a PropagationPolicy of strictly lower priority; a ClusterPropagationPolicy
// takes it only from a ClusterPropagationPolicy of strictly lower priority.
// Among several, the best by the usual order wins, which no other can then
// preempt, so repeated decisions settle.
func preemptor(in Input, claimed *Policy) *Policy {
	eligible := func(list []*Policy, ok func(*Policy) bool) []*Policy {
		var out []*Policy
		for _, p := range list {
			if p.Ref != claimed.Ref && ok(p) {
				out = append(out, p)
			}
		}
		return out
	}
	if in.Template.Obj.GetNamespace() != "" {
		pps := eligible(in.PPs, func(p *Policy) bool {
			return claimed.Ref.Cluster || p.priority() > claimed.priority()
		})
		if p := best(in.Template, pps, true); p != nil {
			return p
		}
	}
	if !claimed.Ref.Cluster {
		return nil
	}
	cpps := eligible(in.CPPs, func(p *Policy) bool { return p.priority() > claimed.priority() })
	return best(in.Template, cpps, true)
}

// held says why binding t to p must wait, or "": a dependent override
// policy is missing, or p is Lazy and the template has not changed since
// the binding was built (or, for a template not bound to p, since p last
// changed).
func held(in Input, p *Policy) string {
	for _, name := range p.Spec.DependentOverrides {
		ns := p.Ref.Namespace
		if in.OverrideExists == nil || !in.OverrideExists(ns, name) {
			return "waiting for dependent override " + name
		}
	}
	if !p.lazy() {
		return ""
	}
	cur := in.Current
	if cur != nil && cur.Claim != nil && cur.Claim.Policy == p.Ref && cur.Claim.ID == p.ID {
		if cur.ResourceVersion == in.Template.ResourceVersion() {
			return "lazy activation: template unchanged"
		}
		return ""
	}
	if in.Template.Revision <= p.Revision {
		return "lazy activation: template older than the policy"
	}
	return ""
}
