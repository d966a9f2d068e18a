package bind

import (
	"context"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// CurrentOf is what the stored binding b says about its template, as
// Decide reads it (Input.Current); nil when the template has no binding.
func CurrentOf(b *workv1alpha1.ResourceBinding) *Current {
	if b == nil {
		return nil
	}
	claim, auto := ClaimOf(b), AutoPropagatedOf(b)
	return &Current{Claim: claim, ResourceVersion: b.Spec.Resource.ResourceVersion,
		Released: claim == nil && !auto && b.Spec.Placement != nil, Auto: auto}
}

// Wanted is the bind stage: Decide's decision for in and the binding it
// asks for, with the spec built (BuildSpec) for Bind and AutoPropagate.
// The detector and Simulate both call it. Want.RequiredBy (the
// dependency graph) and what a Wait or a Release of an opted-out
// Namespace become are the caller's: Wanted leaves them empty.
func Wanted(ctx context.Context, in Input, interp Interpreter) (Decision, Want, error) {
	dec := Decide(in)
	var want Want
	switch dec.Verdict {
	case Bind:
		spec, err := BuildSpec(ctx, in.Template, dec.Policy, interp)
		if err != nil {
			return dec, Want{}, err
		}
		want.Policy, want.Spec = dec.Policy, spec
	case Keep:
		want.Keep = true
	case AutoPropagate:
		spec, err := BuildSpec(ctx, in.Template, NamespacePolicy(), interp)
		if err != nil {
			return dec, Want{}, err
		}
		want.Auto, want.Spec = true, spec
	case Release:
		want.Release = true
	}
	return dec, want, nil
}
