package render

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/rollout"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// rolloutInputs are the renderer's copy of the rollouts: RolloutPolicies
// by namespace and name, and the stored rollout records by work key. Only
// Run's goroutine touches them.
type rolloutInputs struct {
	policies map[string]map[string]*policyv1alpha1.RolloutPolicy
	records  map[string]*rollout.Record
	// broken: rollout records (by work key) and namespaces of
	// RolloutPolicies that do not decode; unknown means hold.
	broken map[string]bool
}

// pacing is how a rollout paces one template's works: rendered at rev
// (template carries rollout.RevisionAnnotation) for the clusters whose
// target is rev, every other cluster keeping what it has.
type pacing struct {
	rev      string
	template *unstructured.Unstructured
	// rec is nil while the rollout is unknown (not stored yet, or its
	// record does not decode): every cluster holds.
	rec *rollout.Record
}

// holds reports whether cluster keeps the version it has: the rollout is
// unknown, or its target for the cluster is not the newest revision. A
// cluster without a work that holds gets none until it is admitted (the
// stable revision is not rendered for newcomers: package doc).
func (p *pacing) holds(cluster string) bool {
	return p.rec == nil || p.rec.State.Target(cluster) != p.rev
}

// applyRollout records a change of a rollout record or a RolloutPolicy and
// marks the works it paces; handled is false for every other key.
func (in *inputs) applyRollout(c view.Change) (handled bool, err error) {
	ro := &in.ro
	if ro.policies == nil {
		ro.policies, ro.records, ro.broken = map[string]map[string]*policyv1alpha1.RolloutPolicy{}, map[string]*rollout.Record{}, map[string]bool{}
	}
	if key, ok := strings.CutPrefix(c.Key, store.RolloutsPrefix); ok {
		in.markAll(key)
		delete(ro.broken, key)
		delete(ro.records, key)
		switch {
		case c.Object == nil:
		case c.Object.Err != nil:
			ro.broken[key] = true
			return true, fmt.Errorf("decode rollout of %s: %w", key, c.Object.Err)
		default:
			ro.records[key] = c.Object.Value.(*rollout.Record)
		}
		return true, nil
	}
	ref, ok := store.ParseObjectKey(c.Key)
	if !ok || !strings.HasPrefix(c.Key, store.ObjectsPrefix) || ref.Group != policyv1alpha1.GroupName || ref.Kind != rollout.KindRolloutPolicy {
		return false, nil
	}
	in.markNamespace(ref.Namespace)
	return true, ro.putPolicy(ref, c.Object)
}

// putPolicy keeps (or forgets) one RolloutPolicy; one that does not decode
// makes its namespace's rollouts unknown until it does.
func (ro *rolloutInputs) putPolicy(ref store.ObjectRef, o *view.Object) error {
	nsKey := "namespace/" + ref.Namespace + "/" + ref.Name
	delete(ro.broken, nsKey)
	if o == nil {
		delete(ro.policies[ref.Namespace], ref.Name)
		return nil
	}
	err := o.Err
	var p *policyv1alpha1.RolloutPolicy
	if err == nil {
		p, err = rollout.DecodePolicy(o.Value.(*unstructured.Unstructured))
	}
	if err != nil {
		ro.broken[nsKey] = true
		return fmt.Errorf("decode RolloutPolicy %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if ro.policies[ref.Namespace] == nil {
		ro.policies[ref.Namespace] = map[string]*policyv1alpha1.RolloutPolicy{}
	}
	ro.policies[ref.Namespace][ref.Name] = p
	return nil
}

// pace returns how key's template t is paced (see inputs.pacing) and
// remembers its revision for notePacing.
func (r *Renderer) pace(key string, t *unstructured.Unstructured) *pacing {
	pc := r.in.pacing(key, t)
	if pc == nil {
		delete(r.paced, key)
		return nil
	}
	r.paced[key] = pc.rev
	return pc
}

// markNamespace marks every template of namespace ns.
func (in *inputs) markNamespace(ns string) {
	if in.loading {
		return
	}
	for key, t := range in.templates {
		if t.GetNamespace() == ns {
			in.markAll(key)
		}
	}
}

// pacing returns how a rollout paces key's template t, nil when no
// RolloutPolicy selects it (it renders as it would without rollouts). A
// RolloutPolicy of t's namespace that does not decode may select it: its
// works hold.
func (in *inputs) pacing(key string, t *unstructured.Unstructured) *pacing {
	ro := &in.ro
	var ps []*policyv1alpha1.RolloutPolicy
	for _, p := range ro.policies[t.GetNamespace()] {
		ps = append(ps, p)
	}
	unknown := ro.broken[key] || ro.brokenPolicyIn(t.GetNamespace())
	if rollout.Select(t, ps) == nil && !unknown {
		return nil
	}
	cops, ops := in.candidates(t)
	rev := rollout.Revision(t, cops, ops)
	tc := t.DeepCopy()
	ann := tc.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[rollout.RevisionAnnotation] = rev
	tc.SetAnnotations(ann)
	p := &pacing{rev: rev, template: tc}
	if !unknown {
		p.rec = ro.records[key]
	}
	return p
}

func (ro *rolloutInputs) brokenPolicyIn(ns string) bool {
	for k := range ro.broken {
		if strings.HasPrefix(k, "namespace/"+ns+"/") {
			return true
		}
	}
	return false
}

// Rollout is what the renderer rendered of a rolled-out work key: the
// template's newest revision and the versions of the works rendered at it.
type Rollout struct {
	Revision string
	Versions map[string]bool
}

// rollouts publishes, for the hub's rollout loop, the revision of each
// paced work key and the versions rendered at it (Renderer.Rollout).
type rollouts struct {
	mu   sync.Mutex // guards by
	by   map[string]Rollout
	wake chan struct{} // signalled when by changes
}

func newRollouts() *rollouts {
	return &rollouts{by: map[string]Rollout{}, wake: make(chan struct{}, 1)}
}

// note records key's revision (rev "" forgets the key: not paced) and the
// versions of set rendered at it.
func (rs *rollouts) note(key, rev string, versions []string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	old, had := rs.by[key]
	if rev == "" {
		if had {
			delete(rs.by, key)
			rs.signal()
		}
		return
	}
	changed := !had || old.Revision != rev
	if changed {
		old = Rollout{Revision: rev, Versions: map[string]bool{}}
	}
	for _, v := range versions {
		changed = changed || !old.Versions[v]
		old.Versions[v] = true
	}
	rs.by[key] = old
	if changed {
		rs.signal()
	}
}

func (rs *rollouts) signal() {
	select {
	case rs.wake <- struct{}{}:
	default:
	}
}

// Rollout returns the newest revision of a work key that a RolloutPolicy
// paces and the versions rendered at it (a copy); ok is false when no
// RolloutPolicy paces it or it was not rendered yet.
func (r *Renderer) Rollout(key string) (Rollout, bool) {
	rs := r.rollouts
	rs.mu.Lock()
	defer rs.mu.Unlock()
	ro, ok := rs.by[key]
	if !ok {
		return Rollout{}, false
	}
	vs := make(map[string]bool, len(ro.Versions))
	for v := range ro.Versions {
		vs[v] = true
	}
	return Rollout{Revision: ro.Revision, Versions: vs}, true
}

// RolloutChanged receives after Rollout's answer changed for some key.
func (r *Renderer) RolloutChanged() <-chan struct{} { return r.rollouts.wake }

// notePacing publishes what plans rendered of paced keys: called after
// each commit, from Run's goroutine.
func (r *Renderer) notePacing(plans []*plan) {
	for _, p := range plans {
		if !p.exists {
			delete(r.paced, p.key)
		}
		rev := r.paced[p.key]
		var vs []string
		for _, up := range p.set {
			vs = append(vs, up.GetVersion())
		}
		r.rollouts.note(p.key, rev, vs)
	}
}
