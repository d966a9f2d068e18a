package clientapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/api/codec"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/hub/store"
)

// Simulate places and renders a template as if it and the given policies
// were applied, storing nothing.
// Any role may simulate a template of its namespaces, with policies of
// them, but not with ResourceInterpreterCustomizations of its own: those
// run their Lua on the hub (see mayRunScripts). Secret data is hidden
// from viewers in the output as in reads (secrets.go).
func (p *Placements) Simulate(ctx context.Context, req *hubv1.SimulateRequest) (*hubv1.SimulateResponse, error) {
	c, err := p.b.authorize(ctx)
	if err != nil {
		return nil, grpcStatus(err)
	}
	resp, err := p.b.simulate(ctx, req, c)
	c.view().redactSimulation(resp)
	return resp, grpcStatus(err)
}

// mayRunScripts refuses the input of a caller who may not apply
// customizations when it holds a ResourceInterpreterCustomization: the
// load-time check Apply and Simulate make of it runs its Lua (top-level
// code and a dry run) on the hub, so it is refused before that check
// runs. Customizations already stored were accepted from an admin and run
// for anyone.
func mayRunScripts(c caller, docs []document) error {
	for _, d := range docs {
		if codec.OwnGroup(d.apiVersion) && d.kind == configv1alpha1.KindResourceInterpreterCustomization {
			if err := c.may(roles.Write, d.kind, ""); err != nil {
				meta, _ := d.obj["metadata"].(map[string]any)
				name, _ := meta["name"].(string)
				return fmt.Errorf("the input holds %s %q, whose Lua scripts the hub would run to check it: %w", d.kind, name, err)
			}
		}
	}
	return nil
}

// env is what a simulation runs against: the stored objects with the given
// ones applied on top.
type env struct {
	pps, cpps []*bind.Policy
	// given are the policies of the request: for the bind stage they
	// changed (bind.Cause), as applying them would.
	given    map[bind.PolicyRef]bool
	ops      []*policyv1alpha1.OverridePolicy
	cops     []*policyv1alpha1.ClusterOverridePolicy
	clusters []clusterv1alpha1.Cluster
	// givenClusters is set when clusters are the request's, not the
	// stored ones: no lease speaks for them.
	givenClusters bool
	// binding is the template's stored binding, nil when none: the
	// scheduling loop decides from its last result, and bindingID is its
	// permanent ID (work.PermanentID).
	binding   *workv1alpha1.ResourceBinding
	bindingID types.UID
}

func (b *backend) simulate(ctx context.Context, req *hubv1.SimulateRequest, c caller) (*hubv1.SimulateResponse, error) {
	docs, err := parseManifests(req.GetTemplate(), b.cfg.MaxManifestBytes)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%w: template: want exactly one object, got %d", ErrInvalid, len(docs))
	}
	if len(req.GetPolicies()) > 0 {
		pdocs, err := parseManifests(req.GetPolicies(), b.cfg.MaxManifestBytes)
		if err != nil {
			return nil, fmt.Errorf("policies: %w", err)
		}
		docs = append(docs, pdocs...)
	}
	if err := mayRunScripts(c, docs); err != nil {
		return nil, err
	}
	items, err := b.prepare(ctx, docs, "default", true)
	if err != nil {
		return nil, err
	}
	if err := mayAll(c, roles.Read, items); err != nil {
		return nil, err
	}
	if items[0].typed != nil {
		items[0].reject(fmt.Sprintf("the template must be a resource template, not a %s", items[0].ref.Kind))
	}
	plans, err := b.plan(ctx, items, time.Now(), b.st.GetAll)
	if err != nil {
		return nil, err
	}
	resp := &hubv1.SimulateResponse{Inputs: response(items, plans, notStored, 0).Results}
	if anyRejected(items) {
		return resp, nil
	}
	e, err := b.environment(ctx, items)
	if err != nil {
		return nil, err
	}
	t, err := storedTemplate(items[0], plans[items[0]])
	if err != nil {
		return nil, err
	}
	resp.Placement, resp.Rendered, err = b.run(ctx, items[0].ref, t, e)
	return resp, err
}

// storedTemplate is the detector's view of the template as Apply would
// store it (plan's value: the hub's uid, creationTimestamp and generation
// included), which is what the controllers read. Its revision is the
// highest there is: Apply writes it after every stored policy (Lazy
// activation then counts it as changed).
func storedTemplate(it *item, p *plan) (*bind.Template, error) {
	if p == nil {
		return nil, fmt.Errorf("template %s: not planned", describe(it.ref))
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(p.value); err != nil {
		return nil, fmt.Errorf("template %s: %w", describe(it.ref), err)
	}
	return &bind.Template{Ref: it.key, Obj: u, Revision: math.MaxInt64}, nil
}

// environment reads the stored policies, clusters and binding that bear on
// the template items[0] and puts the given objects items[1:] on top: a
// given object replaces the stored one of the same kind, namespace and
// name. Given clusters replace the stored snapshot as a whole.
func (b *backend) environment(ctx context.Context, items []*item) (*env, error) {
	tkey := items[0].key
	stored, err := b.storedPolicies(ctx, tkey.Namespace)
	if err != nil {
		return nil, err
	}
	var given []*item
	for _, it := range items[1:] {
		if it.key.Kind == clusterv1alpha1.KindCluster {
			continue
		}
		given = append(given, it)
	}
	merged := overlay(stored, given)
	e := &env{}
	if err := e.sortPolicies(merged); err != nil {
		return nil, err
	}
	if e.clusters, e.givenClusters, err = b.clustersFor(ctx, items[1:]); err != nil {
		return nil, err
	}
	return e, b.readBinding(ctx, tkey, e)
}

// clustersFor is the given clusters (true), or the stored ones when none
// is given.
func (b *backend) clustersFor(ctx context.Context, given []*item) ([]clusterv1alpha1.Cluster, bool, error) {
	var out []clusterv1alpha1.Cluster
	for _, it := range given {
		if c, ok := it.typed.(*clusterv1alpha1.Cluster); ok {
			out = append(out, *c)
		}
	}
	if len(out) > 0 {
		return out, true, nil
	}
	cs, err := b.storedClusters(ctx)
	return cs, false, err
}

// readBinding reads the template's stored binding, if any, and its
// permanent ID.
func (b *backend) readBinding(ctx context.Context, key store.ObjectRef, e *env) error {
	kv, err := b.st.Get(ctx, store.BindingKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	e.binding = &workv1alpha1.ResourceBinding{}
	if err := json.Unmarshal(kv.Value, e.binding); err != nil {
		return fmt.Errorf("decode binding %s: %w", kv.Key, err)
	}
	e.bindingID = work.PermanentID(e.binding, kv.CreateRevision)
	return nil
}

// storedObject is a stored object with its key, its revision and its
// create revision (a policy's permanent ID); a given object laid over a
// stored one keeps the stored create revision, as Apply would; a new one
// has none.
type storedObject struct {
	key     store.ObjectRef
	value   []byte
	rev     int64
	created int64
	// given marks an object of the request (a policy Apply would change).
	given bool
}

// storedPolicies lists the propagation and override policies that can
// apply to a template of namespace ns (cluster-wide ones and, for a
// namespaced template, those of its namespace).
func (b *backend) storedPolicies(ctx context.Context, ns string) ([]storedObject, error) {
	var out []storedObject
	kinds := []string{policyv1alpha1.KindClusterPropagationPolicy, policyv1alpha1.KindClusterOverridePolicy}
	if ns != "" {
		kinds = append(kinds, policyv1alpha1.KindPropagationPolicy, policyv1alpha1.KindOverridePolicy)
	}
	for _, kind := range kinds {
		prefix := store.KindPrefix(store.ObjectsPrefix, policyv1alpha1.GroupName, kind, "")
		if kind == policyv1alpha1.KindPropagationPolicy || kind == policyv1alpha1.KindOverridePolicy {
			prefix = store.KindPrefix(store.ObjectsPrefix, policyv1alpha1.GroupName, kind, ns)
		}
		kvs, _, err := b.st.List(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, kv := range kvs {
			if key, ok := store.ParseObjectKey(kv.Key); ok {
				out = append(out, storedObject{key: key, value: kv.Value, rev: kv.Revision, created: kv.CreateRevision})
			}
		}
	}
	return out, nil
}

// overlay puts the given policies on top of the stored ones.
func overlay(stored []storedObject, given []*item) []storedObject {
	byKey := map[store.ObjectRef]int{}
	for i, s := range stored {
		byKey[s.key] = i
	}
	for _, it := range given {
		js, err := json.Marshal(it.obj)
		if err != nil {
			continue
		}
		s := storedObject{key: it.key, value: js, given: true}
		if i, ok := byKey[it.key]; ok {
			s.created = stored[i].created
			stored[i] = s
			continue
		}
		byKey[it.key] = len(stored)
		stored = append(stored, s)
	}
	return stored
}

// sortPolicies decodes the policies into e, by kind.
func (e *env) sortPolicies(objs []storedObject) error {
	for _, o := range objs {
		var err error
		switch o.key.Kind {
		case policyv1alpha1.KindPropagationPolicy:
			var pp policyv1alpha1.PropagationPolicy
			if err = json.Unmarshal(o.value, &pp); err == nil {
				pp.SetDefaults()
				e.addPolicy(o, &bind.Policy{Ref: bind.PolicyRef{Namespace: pp.Namespace, Name: pp.Name},
					Spec: pp.Spec, Deleting: pp.DeletionTimestamp != nil})
			}
		case policyv1alpha1.KindClusterPropagationPolicy:
			var cpp policyv1alpha1.ClusterPropagationPolicy
			if err = json.Unmarshal(o.value, &cpp); err == nil {
				cpp.Spec.SetDefaults()
				e.addPolicy(o, &bind.Policy{Ref: bind.PolicyRef{Cluster: true, Name: cpp.Name},
					Spec: cpp.Spec, Deleting: cpp.DeletionTimestamp != nil})
			}
		case policyv1alpha1.KindOverridePolicy:
			op := &policyv1alpha1.OverridePolicy{}
			if err = json.Unmarshal(o.value, op); err == nil {
				op.Namespace, op.Name = o.key.Namespace, o.key.Name
				op.SetDefaults() // as the renderer reads it
				e.ops = append(e.ops, op)
			}
		case policyv1alpha1.KindClusterOverridePolicy:
			cop := &policyv1alpha1.ClusterOverridePolicy{}
			if err = json.Unmarshal(o.value, cop); err == nil {
				cop.Name = o.key.Name
				e.cops = append(e.cops, cop)
			}
		}
		if err != nil {
			return fmt.Errorf("decode %s %s/%s: %w", o.key.Kind, o.key.Namespace, o.key.Name, err)
		}
	}
	return nil
}

// addPolicy puts the decoded (Cluster)PropagationPolicy p of o into e
// with what the detector reads from its key: its permanent ID (the create
// revision; none for a policy not stored yet) and its revision.
func (e *env) addPolicy(o storedObject, p *bind.Policy) {
	p.Revision = o.rev
	if o.created != 0 {
		p.ID = strconv.FormatInt(o.created, 10)
	}
	if o.given {
		if e.given == nil {
			e.given = map[bind.PolicyRef]bool{}
		}
		e.given[p.Ref] = true
	}
	if p.Ref.Cluster {
		e.cpps = append(e.cpps, p)
		return
	}
	e.pps = append(e.pps, p)
}

// overrideExists reports whether the OverridePolicy namespace/name (or,
// with namespace empty, the ClusterOverridePolicy name) is in e, as the
// detector's index answers for dependentOverrides.
func (e *env) overrideExists(namespace, name string) bool {
	if namespace == "" {
		return slices.ContainsFunc(e.cops, func(c *policyv1alpha1.ClusterOverridePolicy) bool { return c.Name == name })
	}
	return slices.ContainsFunc(e.ops, func(o *policyv1alpha1.OverridePolicy) bool { return o.Namespace == namespace && o.Name == name })
}
