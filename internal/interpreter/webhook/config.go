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
