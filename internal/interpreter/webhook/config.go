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
//
// The hub is shared, so a webhook is called under bounds Karmada lacks:
//
//   - https only (as Karmada), no proxy, and redirects are not followed: a
//     3xx answer is a failed call;
//   - every connection's resolved address is checked against a Policy
//     (policy.go), which denies loopback, link-local (where clouds serve
//     instance metadata, 169.254.169.254), unspecified and known cloud
//     metadata addresses unless Options.Policy.Allow holds them (tether-hub
//     --webhook-allow-cidrs); the webhook then receives nothing;
//   - errors never quote the response body: a failed call reports its
//     HTTP status code and Go's text for it, an undecodable answer where it
//     broke, and the webhook's own status message at most 256 bytes,
//     non-printable characters replaced;
//   - each webhook has a circuit breaker (breaker.go): after
//     BreakerFailures (5) failed calls in a row it fails calls at once with
//     ErrBreakerOpen for BreakerCooldown (30 s), then sends the next call
//     in the background as a probe (that call fails at once too) whose
//     success closes the breaker, so a dead or slow webhook costs the
//     controllers that call it 5 timeouts (each 1 to 30 s, timeoutSeconds)
//     when it fails, instead of one per call. Close stops the probes;
//   - a configuration given to Refuse instead of Apply is never called:
//     its rules still match, and each call fails at once with the reason
//     (a member agent's owner refused it, agent/customizations).
package webhook

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/api/codec"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// Configuration is the API's ResourceInterpreterWebhookConfiguration, under
// the name this package's callers use.
type Configuration = configv1alpha1.ResourceInterpreterWebhookConfiguration

// DecodeConfiguration decodes one ResourceInterpreterWebhookConfiguration,
// YAML or JSON, in Tether's or Karmada's config group, strictly (see
// api/codec: unknown fields are errors naming their path). Defaults are not
// applied: a hook without timeoutSeconds gets
// configv1alpha1.DefaultWebhookTimeoutSeconds when applied.
func DecodeConfiguration(data []byte) (Configuration, error) {
	obj, err := codec.Decode(data)
	if err != nil {
		return Configuration{}, fmt.Errorf("decode webhook configuration: %w", err)
	}
	cfg, ok := obj.(*Configuration)
	if !ok {
		return Configuration{}, errors.New("decode webhook configuration: the document is not a " +
			configv1alpha1.KindResourceInterpreterWebhookConfiguration)
	}
	return *cfg, nil
}

// ruleMatches reports whether r selects gvk and op. Each field matches
// exactly or with "*".
func ruleMatches(r *configv1alpha1.RuleWithOperations, gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	return matchOp(r.Operations, op) && matchString(r.APIGroups, gvk.Group) &&
		matchString(r.APIVersions, gvk.Version) && matchString(r.Kinds, gvk.Kind)
}

func matchOp(ops []configv1alpha1.InterpreterOperation, op configv1alpha1.InterpreterOperation) bool {
	return slices.Contains(ops, configv1alpha1.InterpreterOperationAll) || slices.Contains(ops, op)
}

func matchString(list []string, s string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, s)
}
