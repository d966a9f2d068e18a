package pipeline

import (
	"context"
	"errors"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/pipeline/work"
)

// Interpreter is what the stages need of the resource interpreter; the
// facade in internal/interpreter satisfies it.
type Interpreter interface {
	bind.Interpreter
	work.Interpreter
}

// Input is everything one template goes through the pipeline with.
type Input struct {
	// Bind is the bind stage's input: the template, the stored binding's
	// claim (bind.CurrentOf(Stored)), the policies and options.
	Bind bind.Input
	// Stored is the template's stored binding, nil when none; StoredID is
	// its permanent ID (work.PermanentID).
	Stored   *workv1alpha1.ResourceBinding
	StoredID types.UID
	// Members are the scheduling loop's view of the clusters
	// (place.BuildMembers); Clusters the stored clusters, rendered for.
	Members  []place.Member
	Clusters []clusterv1alpha1.Cluster
	// ClusterOverrides and Overrides are the stored override policies;
	// work.Candidates picks those that can apply.
	ClusterOverrides []*policyv1alpha1.ClusterOverridePolicy
	Overrides        []*policyv1alpha1.OverridePolicy
	// Now is the scheduling step's clock; Place its options.
	Now   time.Time
	Place place.Options
}

// ClusterWork is one target cluster's work.
type ClusterWork struct {
	Cluster string
	Work    *work.Work
}

// Result is what the pipeline decided for one template.
type Result struct {
	// Decision is the bind stage's; Policy the policy the binding belongs
	// to then (the one it binds to or the claim it keeps), nil for none.
	Decision bind.Decision
	Policy   *bind.PolicyRef
	// Bound is false when the template has no binding of its own (it
	// waits), and when BindErr is set; the stages after bind then did not
	// run.
	Bound   bool
	BindErr error
	// Binding is the binding after the scheduling step, as the loops would
	// store it; Placed is that step's outcome.
	Binding *workv1alpha1.ResourceBinding
	Placed  place.Outcome
	// Works are the target clusters' works, in the binding's order;
	// RenderErr joins the errors of the clusters that did not render.
	Works     []ClusterWork
	RenderErr error
}

// Template runs one template through bind, place and render.
func Template(ctx context.Context, in Input, interp Interpreter) Result {
	var res Result
	dec, want, err := bind.Wanted(ctx, in.Bind, interp)
	res.Decision, res.Policy = dec, policyOf(dec, in.Bind.Current)
	if err != nil {
		res.BindErr = err
		return res
	}
	if dec.Verdict == bind.Wait {
		return res
	}
	res.Bound = true
	if in.Stored != nil {
		want.RequiredBy = in.Stored.Spec.RequiredBy
	}
	rb := bind.Merge(in.Stored, in.Bind.Template, want)
	if in.Stored != nil {
		rb.UID = in.StoredID
	}
	res.Placed = place.Step(rb, in.Members, in.Now, in.Place)
	res.Binding = res.Placed.Binding
	res.Works, res.RenderErr = render(ctx, in, res.Binding, interp)
	return res
}

// policyOf is the policy a binding decided by dec belongs to.
func policyOf(dec bind.Decision, cur *bind.Current) *bind.PolicyRef {
	switch {
	case dec.Verdict == bind.Bind:
		return &dec.Policy.Ref
	case dec.Verdict == bind.Keep && cur != nil && cur.Claim != nil:
		return &cur.Claim.Policy
	}
	return nil
}

// render computes the work of each of rb's target clusters (work.Targets),
// as the renderer does: clusters not in in.Clusters and clusters whose
// dispatching is suspended get none. Every cluster is rendered; the
// messages of those that fail are joined.
func render(ctx context.Context, in Input, rb *workv1alpha1.ResourceBinding, interp Interpreter) ([]ClusterWork, error) {
	obj := in.Bind.Template.Obj
	cops, ops := work.Candidates(obj, in.ClusterOverrides, in.Overrides)
	var out []ClusterWork
	var failed []string
	for _, tc := range work.Targets(rb) {
		c := clusterNamed(in.Clusters, tc.Name)
		if c == nil || work.Suspended(rb, tc.Name) {
			continue
		}
		w, err := work.Render(ctx, work.Input{Template: obj, Binding: rb, Cluster: c, ClusterOverrides: cops, Overrides: ops}, interp)
		if err != nil {
			failed = append(failed, err.Error())
			continue
		}
		out = append(out, ClusterWork{Cluster: tc.Name, Work: w})
	}
	if len(failed) > 0 {
		return out, errors.New(strings.Join(failed, "; "))
	}
	return out, nil
}

func clusterNamed(cs []clusterv1alpha1.Cluster, name string) *clusterv1alpha1.Cluster {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}
