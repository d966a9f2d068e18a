// Package webhook is the interpreter webhook client: it calls the HTTPS
// endpoints declared by ResourceInterpreterWebhookConfigurations with
// Karmada's ResourceInterpreterContext request and verifies the response.
//
//	w := webhook.New()
//	w.Apply(cfg)                                   // from a store watch
//	healthy, enabled, err := w.InterpretHealth(ctx, obj)
//
// For an object and operation only the first matching webhook is called,
// webhooks sorted by "<configName>/<webhookName>", as in Karmada.
package webhook

import (
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// Configuration is a ResourceInterpreterWebhookConfiguration
// (config.karmada.io/v1alpha1), reduced to what the client reads.
type Configuration struct {
	APIVersion string   `json:"apiVersion,omitempty"`
	Kind       string   `json:"kind,omitempty"`
	Metadata   Metadata `json:"metadata"`
	Webhooks   []Hook   `json:"webhooks"`
}

// Metadata is the part of a configuration's metadata that matters.
type Metadata struct {
	Name string `json:"name"`
}

// Hook is one webhook of a configuration.
type Hook struct {
	Name         string                                      `json:"name"`
	ClientConfig admissionregistrationv1.WebhookClientConfig `json:"clientConfig"`
	Rules        []RuleWithOperations                        `json:"rules,omitempty"`
	// TimeoutSeconds is 1–30; nil means DefaultTimeoutSeconds.
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	// InterpreterContextVersions are the request versions the hook accepts,
	// in preference order; only "v1alpha1" exists.
	InterpreterContextVersions []string `json:"interpreterContextVersions"`
}

// RuleWithOperations selects objects and operations. Each field matches
// exactly or with "*".
type RuleWithOperations struct {
	Operations  []configv1alpha1.InterpreterOperation `json:"operations"`
	APIGroups   []string                              `json:"apiGroups"`
	APIVersions []string                              `json:"apiVersions"`
	Kinds       []string                              `json:"kinds"`
}

// Timeouts of a hook call, in seconds.
const (
	DefaultTimeoutSeconds = 10
	MinTimeoutSeconds     = 1
	MaxTimeoutSeconds     = 30
)

func (r RuleWithOperations) matches(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	return matchOp(r.Operations, op) && matchString(r.APIGroups, gvk.Group) &&
		matchString(r.APIVersions, gvk.Version) && matchString(r.Kinds, gvk.Kind)
}

func matchOp(ops []configv1alpha1.InterpreterOperation, op configv1alpha1.InterpreterOperation) bool {
	return slices.Contains(ops, configv1alpha1.InterpreterOperationAll) || slices.Contains(ops, op)
}

func matchString(list []string, s string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, s)
}
