package ctl

import (
	"io"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
	"github.com/tetherproj/tether/internal/interpreter/native"
)

// builtinCustomizations are the built-in (third-party) customizations the
// interpreter loads by default, for --list-builtins.
func builtinCustomizations() ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	return interpreter.BuiltinCustomizations()
}

// nativeKinds are the kinds the native interpreter has handlers for
// (interpreter-spec §8). Native also answers InterpretStatus for every other
// kind (the whole .status); only these kinds are listed.
var nativeKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "batch", Version: "v1", Kind: "CronJob"},
	{Version: "v1", Kind: "Pod"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "PersistentVolumeClaim"},
	{Version: "v1", Kind: "PersistentVolume"},
	{Version: "v1", Kind: "Secret"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
	{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ServiceImport"},
}

// builtin is one line of --list-builtins.
type builtin struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Source     string   `json:"source"` // "thirdparty" (embedded Lua) or "native" (Go)
	Operations []string `json:"operations"`
}

// hooks is what listing needs of an interpreter step.
type hooks interface {
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
}

// listBuiltins prints every built-in kind with the operations it answers,
// sorted by apiVersion and kind.
func listBuiltins(out io.Writer, format string) error {
	cs, err := builtinCustomizations()
	if err != nil {
		return err
	}
	third := interpreter.NewLuaInterpreter(luavm.New(luavm.Options{}))
	third.Load(cs)
	var list []builtin
	seen := map[schema.GroupVersionKind]bool{}
	for _, c := range cs {
		gvk := schema.FromAPIVersionAndKind(c.Spec.Target.APIVersion, c.Spec.Target.Kind)
		if !seen[gvk] {
			seen[gvk] = true
			list = append(list, describe(third, gvk, "thirdparty"))
		}
	}
	nat := native.New()
	for _, gvk := range nativeKinds {
		list = append(list, describe(nat, gvk, "native"))
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].APIVersion != list[j].APIVersion {
			return list[i].APIVersion < list[j].APIVersion
		}
		return list[i].Kind < list[j].Kind
	})
	return write(out, format, map[string]any{"builtins": list})
}

func describe(h hooks, gvk schema.GroupVersionKind, source string) builtin {
	b := builtin{Kind: gvk.Kind, Source: source, Operations: []string{}}
	b.APIVersion, _ = gvk.ToAPIVersionAndKind()
	for _, op := range operations {
		if h.HookEnabled(gvk, op) {
			b.Operations = append(b.Operations, string(op))
		}
	}
	return b
}
