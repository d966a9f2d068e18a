package luavm

import (
	"math"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tetherproj/tether/internal/interpreter/native"
)

// The kube module, loaded with `local kube = require("kube")`:
//
//	kube.resourceAdd(q1, q2, ...)            sum of quantities (strings or nil) as a string
//	kube.accuratePodRequirements(template)   replica requirements of a pod template, or nil
//	kube.getPodDependencies(template, ns)    ConfigMaps, Secrets, ServiceAccount, PVCs, or nil
//	kube.getResourceQuantity(q)              a quantity as a float64
//
// The pod-template rules are the native interpreter's (native.ReplicaRequirements,
// native.PodDependencies), so Lua scripts and built-in kinds agree. A
// template that does not convert is named by its address, where Karmada
// prints the whole table with %#v: a script could otherwise make one
// error message as large as its memory budget.

const kubeLibName = "kube"

// kubeLib holds the settings the helpers depend on.
type kubeLib struct {
	// resourceQuotaEstimate is Karmada's ResourceQuotaEstimate feature gate:
	// accuratePodRequirements then also reports namespace and priorityClassName.
	resourceQuotaEstimate bool
	// funcs are the module's functions. Like the sandbox's other Go
	// functions (sandboxplan.go) they are shared by all states: none reads
	// its environment, and a script cannot change a function object; each
	// require builds a new module table of its state.
	funcs []kubeFunc
}

type kubeFunc struct {
	name string
	fn   *lua.LFunction
}

func newKubeLib(resourceQuotaEstimate bool) *kubeLib {
	k := &kubeLib{resourceQuotaEstimate: resourceQuotaEstimate}
	for _, f := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{"resourceAdd", resourceAdd},
		{"accuratePodRequirements", k.accuratePodRequirements},
		{"getPodDependencies", getPodDependencies},
		{"getResourceQuantity", getResourceQuantity},
	} {
		k.funcs = append(k.funcs, kubeFunc{f.name, &lua.LFunction{IsG: true, GFunction: f.fn}})
	}
	return k
}

func (k *kubeLib) loader(L *lua.LState) int {
	mod := L.CreateTable(0, len(k.funcs))
	for _, f := range k.funcs {
		mod.RawSetString(f.name, f.fn)
	}
	L.Push(mod)
	return 1
}

func resourceAdd(L *lua.LState) int {
	sum := resource.Quantity{}
	for i := 1; i <= L.GetTop(); i++ {
		q := checkQuantity(L, i)
		sum.Add(q)
	}
	L.Push(lua.LString(sum.String()))
	return 1
}

func (k kubeLib) accuratePodRequirements(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.RaiseError("getPodRequirements only accepts one argument")
		return 0
	}
	v := L.CheckTable(1)
	tmpl := &corev1.PodTemplateSpec{}
	if err := convertResult(budgetOf(L), v, tmpl); err != nil {
		L.RaiseError("fail to convert lua value (%T)(%p) to PodTemplateSpec: %v", v, v, err)
		return 0
	}
	req := native.ReplicaRequirements(tmpl, k.resourceQuotaEstimate)
	if req == nil {
		L.Push(lua.LNil)
		return 1
	}
	lv, err := toLua(L, req)
	if err != nil {
		L.RaiseError("fail to convert %#v to Lua value: %v", req, err)
		return 0
	}
	L.Push(lv)
	return 1
}

func getPodDependencies(L *lua.LState) int {
	if L.GetTop() != 2 {
		L.RaiseError("getPodDependencies only accepts two argument")
		return 0
	}
	v := L.CheckTable(1)
	namespace := checkNamespace(L, 2)
	tmpl := &corev1.PodTemplateSpec{}
	if err := convertResult(budgetOf(L), v, tmpl); err != nil {
		L.RaiseError("fail to convert lua value (%T)(%p) to corev1.PodTemplateSpec: %v", v, v, err)
		return 0
	}
	deps := native.PodDependencies(&tmpl.Spec, namespace)
	if deps == nil {
		L.Push(lua.LNil)
		return 1
	}
	lv, err := toLua(L, deps)
	if err != nil {
		L.RaiseError("fail to convert %#v to Lua value: %v", deps, err)
		return 0
	}
	L.Push(lv)
	return 1
}

func getResourceQuantity(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.RaiseError("getResourceQuantity only accepts one argument")
		return 0
	}
	q := checkQuantity(L, 1)
	f := q.AsApproximateFloat64()
	if f < 0 {
		L.RaiseError("int approximation unexpectedly returned a negative value: %#v,", q)
		return 0
	}
	if math.IsInf(f, 1) {
		L.RaiseError("int approximation unexpectedly returned an infinite value: %#v,", q)
		return 0
	}
	L.Push(lua.LNumber(f))
	return 1
}

// checkQuantity reads argument n: nil is zero, a string is parsed with
// resource.MustParse (whose panic becomes the Lua error, as in Karmada).
func checkQuantity(L *lua.LState, n int) resource.Quantity {
	v := L.Get(n)
	switch v.Type() {
	case lua.LTNil:
		return resource.Quantity{}
	case lua.LTString:
		return resource.MustParse(string(v.(lua.LString)))
	default:
		L.TypeError(n, lua.LTString)
		return resource.Quantity{}
	}
}

func checkNamespace(L *lua.LState, n int) string {
	v := L.Get(n)
	switch v.Type() {
	case lua.LTNil:
		return "default"
	case lua.LTString, lua.LTNumber:
		return L.CheckString(n)
	default:
		L.TypeError(n, lua.LTString)
		return ""
	}
}
