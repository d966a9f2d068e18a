package clientapi

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// Bounds of one object beyond its size (Config.MaxObjectBytes), so that
// no object makes every selector, scheduler pass or watch decode of it
// expensive. Kubernetes bounds each label, and annotations as a whole
// (256 KiB), but not the number of labels nor the length of lists.
const (
	// maxLabels is the most labels one object may carry: far above what
	// workloads use (tens), far below what 1.5 MiB could hold (100,000).
	maxLabels = 1000
	// maxArrayItems is the most items of any one array of an object (say
	// a policy's clusterNames or resourceSelectors): fleets and selections
	// beyond it are written with label selectors.
	maxArrayItems = 10000
	// maxBoundErrors bounds the problems reported for one object.
	maxBoundErrors = 5
)

// withinBounds rejects it when its document exceeds the bounds of every
// object: label count and array lengths.
func withinBounds(it *item) bool {
	d := it.doc
	meta, _ := d.obj["metadata"].(map[string]any)
	it.ref = &hubv1.ObjectRef{ApiVersion: d.apiVersion, Kind: d.kind}
	it.ref.Namespace, _ = meta["namespace"].(string)
	it.ref.Name, _ = meta["name"].(string)
	var errs field.ErrorList
	if labels, ok := meta["labels"].(map[string]any); ok && len(labels) > maxLabels {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "labels"), fmt.Sprintf("%d labels", len(labels)),
			fmt.Sprintf("at most %d labels per object", maxLabels)))
	}
	errs = append(errs, longArrays(d.obj, nil, nil)...)
	if len(errs) == 0 {
		return true
	}
	it.reject(fmt.Sprintf("%s %s is invalid: %v", d.kind, it.ref.Name, errs.ToAggregate()), fieldErrors(errs)...)
	return false
}

// longArrays appends to errs every array of v longer than maxArrayItems,
// up to maxBoundErrors. The codec bounded v's depth.
func longArrays(v any, path *field.Path, errs field.ErrorList) field.ErrorList {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if len(errs) >= maxBoundErrors {
				break
			}
			p := field.NewPath(k)
			if path != nil {
				p = path.Child(k)
			}
			errs = longArrays(e, p, errs)
		}
	case []any:
		if len(x) > maxArrayItems {
			return append(errs, field.TooMany(path, len(x), maxArrayItems))
		}
		for i, e := range x {
			if len(errs) >= maxBoundErrors {
				break
			}
			errs = longArrays(e, path.Index(i), errs)
		}
	}
	return errs
}

// annotationErrors checks annotations as Kubernetes does: string values,
// qualified keys, 256 KiB in all.
func annotationErrors(meta map[string]any) field.ErrorList {
	raw, ok := meta["annotations"].(map[string]any)
	if !ok {
		return nil
	}
	p := field.NewPath("metadata", "annotations")
	annotations := make(map[string]string, len(raw))
	var errs field.ErrorList
	for k, v := range raw {
		s, ok := v.(string)
		if !ok {
			errs = append(errs, field.Invalid(p.Key(k), v, "must be a string"))
		}
		annotations[k] = s
	}
	return append(errs, apivalidation.ValidateAnnotations(annotations, p)...)
}

// replicatedKinds are the built-in workloads whose spec.replicas is an
// int32 that Kubernetes requires to be at least 0; the hub schedules and
// divides it, so it checks it before storing.
var replicatedKinds = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:        true,
	{Group: "apps", Kind: "StatefulSet"}:       true,
	{Group: "apps", Kind: "ReplicaSet"}:        true,
	{Group: "", Kind: "ReplicationController"}: true,
}

// replicaErrors checks spec.replicas of the built-in workloads: absent, or
// an integer from 0 to 2^31-1.
func replicaErrors(gk schema.GroupKind, obj map[string]any) field.ErrorList {
	if !replicatedKinds[gk] {
		return nil
	}
	spec, _ := obj["spec"].(map[string]any)
	v, ok := spec["replicas"]
	if !ok || v == nil {
		return nil
	}
	p := field.NewPath("spec", "replicas")
	n, ok := v.(json.Number)
	i, isInt := new(big.Int), false
	if ok {
		_, isInt = i.SetString(n.String(), 10)
	}
	switch {
	case !isInt:
		return field.ErrorList{field.Invalid(p, v, "must be an integer")}
	case i.Sign() < 0:
		return field.ErrorList{field.Invalid(p, n.String(), "must be greater than or equal to 0")}
	case i.Cmp(big.NewInt(math.MaxInt32)) > 0:
		return field.ErrorList{field.Invalid(p, n.String(), fmt.Sprintf("must be at most %d", math.MaxInt32))}
	}
	return nil
}
