package overrides

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// Container fields the command and args overriders rewrite.
const (
	fieldCommand = "command"
	fieldArgs    = "args"
)

// commandArgsPatch builds the ops of one command or args overrider (field
// is "command" or "args") for every container named o.ContainerName of a
// known workload kind: an absent field is added, a present one replaced
// with the whole new list.
func commandArgsPatch(obj *unstructured.Unstructured, field string, o *policyv1alpha1.CommandArgsOverrider) ([]patchOp, error) {
	list, prefix, err := containers(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to retrieves path(%s) from rawObj, error: %v", prefix, err)
	}
	var ops []patchOp
	for i, c := range list {
		container, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s/%d is %T, not a container", prefix, i, c)
		}
		if name, ok := container["name"].(string); !ok || name != o.ContainerName {
			continue
		}
		path := fmt.Sprintf("%s/%d/%s", prefix, i, field)
		if container[field] == nil {
			ops = append(ops, patchOp{Op: opAdd, Path: path, Value: overrideList([]string{}, o)})
			continue
		}
		current, ok := container[field].([]any)
		if !ok {
			return nil, fmt.Errorf("%s is %T, not a list", path, container[field])
		}
		values := make([]string, 0, len(current))
		for _, v := range current {
			values = append(values, fmt.Sprintf("%s", v))
		}
		ops = append(ops, patchOp{Op: opReplace, Path: path, Value: overrideList(values, o)})
	}
	return ops, nil
}

// overrideList applies o to a command or args list: add appends the
// values, remove drops every element equal to any value, any other
// operator keeps the list. The result is never nil (it encodes as []).
func overrideList(current []string, o *policyv1alpha1.CommandArgsOverrider) []string {
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd:
		return append(current, o.Value...)
	case policyv1alpha1.OverriderOpRemove:
		return slices.DeleteFunc(current, func(v string) bool { return slices.Contains(o.Value, v) })
	}
	return current
}
