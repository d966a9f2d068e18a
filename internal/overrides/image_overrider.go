package overrides

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// containerPaths lists, by kind (the group is not consulted, as in Karmada),
// where the containers that image, command and args overriders touch
// without a predicate live. Other kinds are left untouched; init and
// ephemeral containers never are touched.
var containerPaths = map[string][]string{
	"Pod":         {"spec", "containers"},
	"ReplicaSet":  {"spec", "template", "spec", "containers"},
	"Deployment":  {"spec", "template", "spec", "containers"},
	"DaemonSet":   {"spec", "template", "spec", "containers"},
	"StatefulSet": {"spec", "template", "spec", "containers"},
	"Job":         {"spec", "template", "spec", "containers"},
}

// containers returns the containers of obj's kind and their JSON pointer,
// or nil when the kind has no known containers or the list is absent.
func containers(obj *unstructured.Unstructured) ([]any, string, error) {
	path, ok := containerPaths[obj.GetKind()]
	if !ok {
		return nil, "", nil
	}
	pointer := "/" + strings.Join(path, "/")
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil || !found || v == nil {
		return nil, pointer, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, pointer, fmt.Errorf("%s of %s is %T, not a list", pointer, obj.GetKind(), v)
	}
	return list, pointer, nil
}

// imagePatch builds the replace ops of one image overrider: the string at
// the predicate path, or every container image of a known workload kind.
func imagePatch(obj *unstructured.Unstructured, o *policyv1alpha1.ImageOverrider) ([]patchOp, error) {
	if o.Predicate != nil {
		image, err := predicateString(obj.Object, o.Predicate.Path)
		if err != nil {
			return nil, fmt.Errorf("failed to obtain imageValue with predicate path(%s), error: %v", o.Predicate.Path, err)
		}
		op, err := imageOp(o.Predicate.Path, image, o)
		if err != nil {
			return nil, err
		}
		return []patchOp{op}, nil
	}
	list, prefix, err := containers(obj)
	if err != nil {
		return nil, err
	}
	ops := make([]patchOp, 0, len(list))
	for i, c := range list {
		container, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s/%d is %T, not a container", prefix, i, c)
		}
		image, ok := container["image"].(string)
		if !ok && container["image"] != nil {
			return nil, fmt.Errorf("%s/%d/image is %T, not a string", prefix, i, container["image"])
		}
		op, err := imageOp(fmt.Sprintf("%s/%d/image", prefix, i), image, o)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// imageOp rewrites image per o and returns the replace op for path. A
// value taken from the cluster (resolve) must leave a parsable image.
func imageOp(path, image string, o *policyv1alpha1.ImageOverrider) (patchOp, error) {
	if !strings.HasPrefix(path, "/") {
		return patchOp{}, fmt.Errorf("imagePath should be start with / character")
	}
	img, err := ParseImage(image)
	if err != nil {
		return patchOp{}, fmt.Errorf("failed to parse image value(%s), error: %v", image, err)
	}
	if err := overrideImage(&img, o); err != nil {
		return patchOp{}, err
	}
	if o.ValueFrom != nil {
		if _, err := ParseImage(img.String()); err != nil {
			return patchOp{}, fmt.Errorf("valueFrom: the cluster's value %q makes image %q: %v", o.Value, img.String(), err)
		}
	}
	return patchOp{Op: opReplace, Path: path, Value: img.String()}, nil
}

// overrideImage applies one component × operator to img. Registry and
// repository "add" are plain string concatenation (registry "" + ".cn"
// gives ".cn"); an invalid tag value leaves the image unchanged.
func overrideImage(img *Image, o *policyv1alpha1.ImageOverrider) error {
	var field *string
	switch o.Component {
	case policyv1alpha1.Registry:
		field = &img.Registry
	case policyv1alpha1.Repository:
		field = &img.Repository
	case policyv1alpha1.Tag:
		overrideTag(img, o)
		return nil
	default:
		return fmt.Errorf("unsupported image component(%s)", o.Component)
	}
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd:
		*field += o.Value
	case policyv1alpha1.OverriderOpReplace:
		*field = o.Value
	case policyv1alpha1.OverriderOpRemove:
		*field = ""
	}
	return nil
}

// overrideTag applies a Tag overrider, which works on "tag or digest".
func overrideTag(img *Image, o *policyv1alpha1.ImageOverrider) {
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd:
		img.SetTagOrDigest(img.TagOrDigest() + o.Value)
	case policyv1alpha1.OverriderOpReplace:
		img.SetTagOrDigest(o.Value)
	case policyv1alpha1.OverriderOpRemove:
		img.RemoveTagOrDigest()
	}
}
