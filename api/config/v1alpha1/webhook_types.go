package v1alpha1

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceInterpreterWebhookConfiguration registers webhooks that interpret
// objects for the operations and kinds their rules name. It is
// cluster-scoped.
type ResourceInterpreterWebhookConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Webhooks are the hooks with their rules.
	Webhooks []ResourceInterpreterWebhook `json:"webhooks"`
}

// ResourceInterpreterWebhookConfigurationList is a list of
// ResourceInterpreterWebhookConfiguration.
type ResourceInterpreterWebhookConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceInterpreterWebhookConfiguration `json:"items"`
}

// ResourceInterpreterWebhook is one webhook and what it interprets.
type ResourceInterpreterWebhook struct {
	// Name is the webhook's fully qualified name, unique in the
	// configuration.
	Name string `json:"name"`

	// ClientConfig says how to reach the hook: exactly one of url and
	// service; the service takes precedence at call time.
	ClientConfig admissionregistrationv1.WebhookClientConfig `json:"clientConfig"`

	// Rules are the operations and kinds the hook handles; it handles a
	// request if any rule matches.
	Rules []RuleWithOperations `json:"rules,omitempty"`

	// TimeoutSeconds is the call timeout, 1 to 30 seconds; defaults to 10.
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// InterpreterContextVersions are the ResourceInterpreterContext versions
	// the hook accepts, in order of preference; it must include "v1alpha1".
	InterpreterContextVersions []string `json:"interpreterContextVersions"`
}

// RuleWithOperations is a set of operations and a Rule.
type RuleWithOperations struct {
	// Operations the hook handles; "*" (alone) means all.
	Operations []InterpreterOperation `json:"operations"`

	Rule `json:",inline"`
}

// Rule selects kinds by API group, version and kind; "*" (alone) matches
// all values of a field and "" is the core group.
type Rule struct {
	APIGroups   []string `json:"apiGroups"`
	APIVersions []string `json:"apiVersions"`
	Kinds       []string `json:"kinds"`
}

// Webhook defaults and limits.
const (
	// DefaultWebhookTimeoutSeconds is the default call timeout, in seconds.
	DefaultWebhookTimeoutSeconds int32 = 10
	// MinWebhookTimeoutSeconds and MaxWebhookTimeoutSeconds bound
	// TimeoutSeconds, in seconds.
	MinWebhookTimeoutSeconds int32 = 1
	MaxWebhookTimeoutSeconds int32 = 30
	// DefaultWebhookServicePort is the default service port.
	DefaultWebhookServicePort int32 = 443
	// InterpreterContextVersion is the only ResourceInterpreterContext
	// version Tether speaks.
	InterpreterContextVersion = "v1alpha1"
)

// SetDefaults sets each webhook's timeout to 10 seconds and its service port
// to 443 when they are not set.
func (c *ResourceInterpreterWebhookConfiguration) SetDefaults() {
	for i := range c.Webhooks {
		hook := &c.Webhooks[i]
		if hook.TimeoutSeconds == nil {
			secs := DefaultWebhookTimeoutSeconds
			hook.TimeoutSeconds = &secs
		}
		if svc := hook.ClientConfig.Service; svc != nil && svc.Port == nil {
			port := DefaultWebhookServicePort
			svc.Port = &port
		}
	}
}

// SetDefaults does nothing: a ResourceInterpreterCustomization has no
// defaults. It exists so that every object has the same methods.
func (c *ResourceInterpreterCustomization) SetDefaults() {}
