package detector

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/overrides"
)

// The binding condition that reports undecodable inputs. A stored
// template, policy or override policy that does not decode is never taken
// as absent (that would unbind, move or delete works): the detector keeps
// its last good value, and every binding it concerns carries this
// condition, False, naming the object and the error, until it decodes
// again. Bindings whose inputs all decode do not carry it.
const (
	ConditionInputsDecoded = "InputsDecoded"
	ReasonUndecodable      = "Undecodable"
)

// broken records the stored objects that last failed to decode, with the
// error, so that the bindings they concern say so. Their last good values,
// if any, stay in the index.
type broken struct {
	templates map[store.ObjectRef]string
	policies  map[bind.PolicyRef]string
	overrides map[[2]string]string // {namespace, name}; namespace "" for a ClusterOverridePolicy
	// bindings are the stored bindings that do not decode, by {namespace,
	// binding name} as a requiredBy snapshot names them.
	bindings map[[2]string]string
}

func newBroken() broken {
	return broken{templates: map[store.ObjectRef]string{}, policies: map[bind.PolicyRef]string{}, overrides: map[[2]string]string{},
		bindings: map[[2]string]string{}}
}

// keepBrokenParents adds to fresh (from the parents the index knows) the
// snapshots of cur, a dependency's stored requiredBy, whose parent binding
// does not decode: that parent is not known to need the dependency any
// more only because its binding cannot be read, which never removes the
// dependency from a cluster. The result is sorted as RequiredBy sorts.
func (x *index) keepBrokenParents(fresh, cur []workv1alpha1.BindingSnapshot) []workv1alpha1.BindingSnapshot {
	out := fresh
	for _, s := range cur {
		if _, broken := x.broken.bindings[[2]string{s.Namespace, s.Name}]; !broken {
			continue
		}
		if !slices.ContainsFunc(out, func(f workv1alpha1.BindingSnapshot) bool { return f.Namespace == s.Namespace && f.Name == s.Name }) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b workv1alpha1.BindingSnapshot) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// decodeFailed logs and counts a stored object that does not decode.
func (d *Detector) decodeFailed(what, key string, err error) {
	d.counts.Add("detector", guard.KindDecode)
	d.log.Error("stored object does not decode; its last good value is kept and the bindings it concerns report it",
		"object", what, "key", key, "error", err)
}

// problems lists what does not decode among the inputs of the binding of
// ref (template t, nil when not known) claimed by claim: the template, the
// claiming policy, and the override policies that select the template.
func (x *index) problems(ref store.ObjectRef, t *bind.Template, claim *bind.Claim) []string {
	var out []string
	if msg, ok := x.broken.templates[ref]; ok {
		out = append(out, fmt.Sprintf("template %s: %s", refString(ref), msg))
	}
	if claim != nil {
		if msg, ok := x.broken.policies[claim.Policy]; ok {
			out = append(out, fmt.Sprintf("%s: %s", claim.Policy, msg))
		}
	}
	for key, msg := range x.broken.overrides {
		if x.overrideMaySelect(key, ref, t) {
			kind := policyv1alpha1.KindOverridePolicy + " " + key[0] + "/" + key[1]
			if key[0] == "" {
				kind = policyv1alpha1.KindClusterOverridePolicy + " " + key[1]
			}
			out = append(out, fmt.Sprintf("%s: %s", kind, msg))
		}
	}
	slices.Sort(out)
	return out
}

// overrideMaySelect reports whether the override policy key selected the
// template by its last good selectors; without any, whether it could
// (same namespace, or a ClusterOverridePolicy).
func (x *index) overrideMaySelect(key [2]string, ref store.ObjectRef, t *bind.Template) bool {
	if key[0] != "" && key[0] != ref.Namespace {
		return false
	}
	sel, known := x.overrideSelectors[key]
	if !known || t == nil || len(sel) == 0 {
		return true
	}
	return overrides.MatchesResource(t.Obj, sel...)
}

// setDecodeCondition sets or removes ConditionInputsDecoded on b.
func setDecodeCondition(b *workv1alpha1.ResourceBinding, problems []string) {
	if len(problems) == 0 {
		meta.RemoveStatusCondition(&b.Status.Conditions, ConditionInputsDecoded)
		return
	}
	b.Status.Conditions = slices.Clone(b.Status.Conditions)
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{
		Type: ConditionInputsDecoded, Status: metav1.ConditionFalse, Reason: ReasonUndecodable,
		Message: "the last good value of each is used: " + strings.Join(problems, "; "),
	})
}

// decodeOverrideSelectors reads the resource selectors of a stored
// (Cluster)OverridePolicy.
func decodeOverrideSelectors(value []byte) ([]policyv1alpha1.ResourceSelector, error) {
	var doc struct {
		Spec struct {
			ResourceSelectors []policyv1alpha1.ResourceSelector `json:"resourceSelectors"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(value, &doc); err != nil {
		return nil, err
	}
	return doc.Spec.ResourceSelectors, nil
}
