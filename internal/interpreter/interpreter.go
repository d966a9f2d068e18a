package interpreter

import (
	"context"
	"errors"
	"net/netip"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
	"github.com/tetherproj/tether/internal/interpreter/native"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// step is one interpreter of the chain. Each method returns (result,
// enabled, err); enabled is false when the step has nothing for the object's
// GVK and the operation, and the next step is tried.
type step interface {
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
	GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, bool, error)
	GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.Component, bool, error)
	ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replica int64) (*unstructured.Unstructured, bool, error)
	Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, bool, error)
	AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, bool, error)
	ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (*runtime.RawExtension, bool, error)
	InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, bool, error)
	GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, bool, error)
}

// nativeHooks is what the facade uses of the native interpreter.
type nativeHooks interface {
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
	GetReplicas(obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, error)
	ReviseReplica(obj *unstructured.Unstructured, replica int64) (*unstructured.Unstructured, error)
	Retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error)
	AggregateStatus(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error)
	ReflectStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error)
	InterpretHealth(obj *unstructured.Unstructured) (bool, error)
	GetDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error)
}

// Config configures an Interpreter.
type Config struct {
	// Limits bound every Lua call; zero value: luavm.DefaultLimits().
	Limits luavm.Limits
	// LuaConcurrency bounds the Lua calls running at once (0 = unbounded;
	// luavm.Options.Concurrency).
	LuaConcurrency int
	// ResourceQuotaEstimate is Karmada's feature gate (default off).
	ResourceQuotaEstimate bool
	// ThirdParty are the built-in customizations; nil loads the embedded
	// ones (see builtin.go).
	ThirdParty []configv1alpha1.ResourceInterpreterCustomization
	// WebhookAllowCIDRs are addresses webhooks may be called at although
	// the webhook policy denies them (loopback, link-local, cloud
	// metadata); see webhook.Policy.
	WebhookAllowCIDRs []netip.Prefix
}

// Interpreter answers the interpreter operations with Karmada's precedence:
// RIC Lua scripts, then webhooks, then built-in third-party Lua, then native.
// The first step that is enabled for the object's GVK and the operation
// answers, and its error, if any, is returned: errors never fall through.
type Interpreter struct {
	logger hclog.Logger
	vm     *luavm.VM

	customizations *LuaInterpreter
	webhooks       *webhook.Interpreter
	thirdParty     *LuaInterpreter
	native         nativeHooks

	// chain is customizations, webhooks, thirdParty; native comes last.
	chain []step
}

// New builds an Interpreter with no RICs and no webhooks.
func New(cfg Config, logger hclog.Logger) (*Interpreter, error) {
	if cfg.Limits == (luavm.Limits{}) {
		cfg.Limits = luavm.DefaultLimits()
	}
	vm := luavm.New(luavm.Options{Limits: cfg.Limits, ResourceQuotaEstimate: cfg.ResourceQuotaEstimate, Concurrency: cfg.LuaConcurrency})
	third := cfg.ThirdParty
	if third == nil {
		var err error
		if third, err = BuiltinCustomizations(); err != nil {
			return nil, err
		}
	}
	i := &Interpreter{
		logger:         logger.Named("interpreter"),
		vm:             vm,
		customizations: NewLuaInterpreter(vm),
		webhooks:       webhook.New(webhook.Options{Policy: webhook.Policy{Allow: cfg.WebhookAllowCIDRs}}),
		thirdParty:     NewLuaInterpreter(vm),
		native:         native.New(),
	}
	i.thirdParty.Load(third)
	i.chain = []step{i.customizations, i.webhooks, i.thirdParty}
	return i, nil
}

// ApplyCustomization validates a RIC (ValidateCustomization, against the
// other loaded RICs; its previous version does not conflict) and adds or
// replaces it by name. A refused RIC leaves the previous version in place.
func (i *Interpreter) ApplyCustomization(ctx context.Context, c *configv1alpha1.ResourceInterpreterCustomization) error {
	if err := ValidateCustomization(ctx, i.vm, c, i.customizations.Customizations()); err != nil {
		return err
	}
	i.customizations.Apply(c)
	i.logger.Debug("customization applied", "name", c.Name, "target", targetGVK(c).String())
	return nil
}

// RemoveCustomization deletes a RIC by name.
func (i *Interpreter) RemoveCustomization(name string) {
	i.customizations.Remove(name)
}

// LoadCustomizations replaces every RIC (a resync). Karmada loads whatever
// the store holds, so no validation happens here; the store is expected to
// hold RICs that passed ApplyCustomization or admission.
func (i *Interpreter) LoadCustomizations(cs []configv1alpha1.ResourceInterpreterCustomization) {
	i.customizations.Load(cs)
}

// ApplyWebhookConfiguration adds or replaces a webhook configuration.
func (i *Interpreter) ApplyWebhookConfiguration(cfg webhook.Configuration) error {
	return i.webhooks.Apply(cfg)
}

// RefuseWebhookConfiguration adds or replaces a webhook configuration
// that is never called (webhook.Interpreter.Refuse): the operations its
// rules select fail with why.
func (i *Interpreter) RefuseWebhookConfiguration(cfg webhook.Configuration, why error) error {
	return i.webhooks.Refuse(cfg, why)
}

// VM is the Lua VM every customization runs in, with the interpreter's
// limits, for validating scripts under the same bounds.
func (i *Interpreter) VM() *luavm.VM { return i.vm }

// Close stops the webhooks' background probes (webhook.Interpreter.Close)
// and waits for them.
func (i *Interpreter) Close() {
	i.webhooks.Close()
}

// RemoveWebhookConfiguration deletes a webhook configuration by name.
func (i *Interpreter) RemoveWebhookConfiguration(name string) {
	i.webhooks.Remove(name)
}

// HookEnabled is true when any step can answer op for gvk.
func (i *Interpreter) HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	if i.native.HookEnabled(gvk, op) {
		return true
	}
	for _, s := range i.chain {
		if s.HookEnabled(gvk, op) {
			return true
		}
	}
	return false
}

// Remote reports whether a webhook answers op for gvk (no RIC script
// does first): a call over the network that may take the webhook's
// timeout, which a controller runs off its main loop.
func (i *Interpreter) Remote(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	return !i.customizations.HookEnabled(gvk, op) && i.webhooks.HookEnabled(gvk, op)
}

// ErrComponentsNotImplemented is GetComponents' error when no Lua or
// webhook step answers (native never does).
var ErrComponentsNotImplemented = errors.New("interface GetComponents not implemented yet")

// GetReplicas returns the object's replicas and per-replica requirements.
func (i *Interpreter) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, error) {
	for _, s := range i.chain {
		if r, req, ok, err := s.GetReplicas(ctx, obj); ok {
			return r, req, err
		}
	}
	return i.native.GetReplicas(obj)
}

// GetComponents returns the pod templates of a multi-template workload.
func (i *Interpreter) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.Component, error) {
	if obj == nil {
		return nil, errors.New("get components: nil object")
	}
	for _, s := range i.chain {
		if comps, ok, err := s.GetComponents(ctx, obj); ok {
			return comps, err
		}
	}
	return nil, ErrComponentsNotImplemented
}

// ReviseReplica returns obj with its replicas set to replica.
func (i *Interpreter) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replica int64) (*unstructured.Unstructured, error) {
	for _, s := range i.chain {
		if out, ok, err := s.ReviseReplica(ctx, obj, replica); ok {
			return out, err
		}
	}
	return i.native.ReviseReplica(obj, replica)
}

// Retain returns desired with the values observed in the member cluster
// that must be kept.
func (i *Interpreter) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for _, s := range i.chain {
		if out, ok, err := s.Retain(ctx, desired, observed); ok {
			return out, err
		}
	}
	return i.native.Retain(desired, observed)
}

// AggregateStatus returns obj with the member statuses aggregated.
func (i *Interpreter) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	for _, s := range i.chain {
		if out, ok, err := s.AggregateStatus(ctx, obj, items); ok {
			return out, err
		}
	}
	return i.native.AggregateStatus(obj, items)
}

// ReflectStatus returns the status a member object reports.
func (i *Interpreter) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	for _, s := range i.chain {
		if out, ok, err := s.ReflectStatus(ctx, obj); ok {
			return out, err
		}
	}
	return i.native.ReflectStatus(obj)
}

// InterpretHealth says whether a member object is healthy.
func (i *Interpreter) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	for _, s := range i.chain {
		if h, ok, err := s.InterpretHealth(ctx, obj); ok {
			return h, err
		}
	}
	return i.native.InterpretHealth(obj)
}

// Health is the work-status controller's rule: with no hook for the object
// it is Healthy; an error makes it Unknown.
func (i *Interpreter) Health(ctx context.Context, obj *unstructured.Unstructured) configv1alpha1.ResourceHealth {
	h, _ := i.HealthWithError(ctx, obj)
	return h
}

// HealthWithError is Health, with the error that made the object Unknown
// (nil otherwise), for whoever reports why.
func (i *Interpreter) HealthWithError(ctx context.Context, obj *unstructured.Unstructured) (configv1alpha1.ResourceHealth, error) {
	if !i.HookEnabled(obj.GroupVersionKind(), configv1alpha1.InterpreterOperationInterpretHealth) {
		return configv1alpha1.ResourceHealthy, nil
	}
	healthy, err := i.InterpretHealth(ctx, obj)
	switch {
	case err != nil:
		i.logger.Debug("health unknown", "kind", obj.GetKind(), "namespace", obj.GetNamespace(), "name", obj.GetName(), "error", err)
		return configv1alpha1.ResourceUnknown, err
	case healthy:
		return configv1alpha1.ResourceHealthy, nil
	default:
		return configv1alpha1.ResourceUnhealthy, nil
	}
}

// GetDependencies returns the objects obj depends on.
func (i *Interpreter) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	for _, s := range i.chain {
		if deps, ok, err := s.GetDependencies(ctx, obj); ok {
			return deps, err
		}
	}
	return i.native.GetDependencies(obj)
}
