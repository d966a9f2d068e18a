package rollout

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/internal/overrides"
)

// KindRolloutPolicy is the kind of a RolloutPolicy (policy.tether.io only).
const KindRolloutPolicy = policyv1alpha1.KindRolloutPolicy

// RevisionAnnotation is set on a rolled-out template's objects to the
// revision they were rendered at, so that a work's version (a hash of its
// content) names one revision: an agent's ack or report of a version of
// another revision never counts for this one.
const RevisionAnnotation = "rollout.tether.io/revision"

// Select returns the RolloutPolicy that paces t among policies (the
// policies of every namespace may be given): one of t's namespace whose
// selectors match it, the highest priority first, then the first by name;
// nil when none does.
func Select(t *unstructured.Unstructured, policies []*policyv1alpha1.RolloutPolicy) *policyv1alpha1.RolloutPolicy {
	var best *policyv1alpha1.RolloutPolicy
	for _, p := range policies {
		if p.Namespace != t.GetNamespace() || !overrides.MatchesResource(t, p.Spec.ResourceSelectors...) {
			continue
		}
		if best == nil || better(p, best) {
			best = p
		}
	}
	return best
}

func better(a, b *policyv1alpha1.RolloutPolicy) bool {
	if c := cmp.Compare(priority(a), priority(b)); c != 0 {
		return c > 0
	}
	return a.Name < b.Name
}

func priority(p *policyv1alpha1.RolloutPolicy) int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}

// Revision is the digest of what makes a template's works change because
// of the template or its overrides: the template without its status and
// without metadata other than its labels and annotations (the hub's own
// status.tether.io/ annotations left out), and the specs of the override
// policies that apply to it, in the order they apply. The renderer and
// the rollout loop both name revisions with it.
func Revision(t *unstructured.Unstructured, cops []policyv1alpha1.ClusterOverridePolicy, ops []policyv1alpha1.OverridePolicy) string {
	body := make(map[string]any, len(t.Object))
	for k, v := range t.Object {
		if k != "status" && k != "metadata" {
			body[k] = v
		}
	}
	body["labels"] = t.GetLabels()
	ann := map[string]string{}
	for k, v := range t.GetAnnotations() {
		if !strings.HasPrefix(k, "status.tether.io/") && k != RevisionAnnotation {
			ann[k] = v
		}
	}
	body["annotations"] = ann
	type named struct {
		Name string `json:"name"`
		Spec any    `json:"spec"`
	}
	var pol []named
	for _, p := range cops {
		pol = append(pol, named{"ClusterOverridePolicy/" + p.Name, p.Spec})
	}
	for _, p := range ops {
		pol = append(pol, named{"OverridePolicy/" + p.Name, p.Spec})
	}
	body["overrides"] = pol
	b, err := json.Marshal(body) // map keys sorted: canonical
	if err != nil {
		// An unstructured object always marshals; the revision is then
		// the template's identity, so that nothing is pushed unjudged.
		b = []byte(t.GetNamespace() + "/" + t.GetName())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// DecodePolicy is a stored RolloutPolicy (as the view holds it) typed,
// with its defaults set: what the renderer and the rollout loop both
// select with.
func DecodePolicy(u *unstructured.Unstructured) (*policyv1alpha1.RolloutPolicy, error) {
	b, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	p := &policyv1alpha1.RolloutPolicy{}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("decode RolloutPolicy %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	p.SetDefaults()
	return p, nil
}
