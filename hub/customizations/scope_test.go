package customizations

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

func TestScopeMatches(t *testing.T) {
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	configMap := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	hooks := func(rules ...configv1alpha1.Rule) Scope {
		cfg := &configv1alpha1.ResourceInterpreterWebhookConfiguration{}
		for _, r := range rules {
			cfg.Webhooks = append(cfg.Webhooks, configv1alpha1.ResourceInterpreterWebhook{
				Rules: []configv1alpha1.RuleWithOperations{{Operations: []configv1alpha1.InterpreterOperation{"*"}, Rule: r}}})
		}
		return WebhookScope(cfg)
	}
	tests := []struct {
		name  string
		scope Scope
		want  map[schema.GroupVersionKind]bool
	}{
		{"nothing", Scope{}, map[schema.GroupVersionKind]bool{widget: false, deployment: false}},
		{"a customization's exact target", TargetScope(configv1alpha1.CustomizationTarget{APIVersion: "example.com/v1", Kind: "Widget"}),
			map[schema.GroupVersionKind]bool{widget: true, deployment: false, {Group: "example.com", Version: "v2", Kind: "Widget"}: false}},
		{"a core target", TargetScope(configv1alpha1.CustomizationTarget{APIVersion: "v1", Kind: "ConfigMap"}),
			map[schema.GroupVersionKind]bool{configMap: true, widget: false}},
		{"a malformed target", TargetScope(configv1alpha1.CustomizationTarget{APIVersion: "a/b/c", Kind: "Widget"}),
			map[schema.GroupVersionKind]bool{widget: false}},
		{"webhook rules with wildcards", hooks(configv1alpha1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"*"}, Kinds: []string{"*"}}),
			map[schema.GroupVersionKind]bool{deployment: true, widget: false, configMap: false}},
		{"webhook rules for two kinds", hooks(
			configv1alpha1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Kinds: []string{"Widget"}},
			configv1alpha1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Kinds: []string{"ConfigMap"}}),
			map[schema.GroupVersionKind]bool{widget: true, configMap: true, deployment: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for gvk, want := range tt.want {
				if got := tt.scope.Matches(gvk); got != want {
					t.Errorf("Matches(%v) = %v; want %v", gvk, got, want)
				}
			}
		})
	}
}

// TestScopeIsBounded: adding more distinct rules than maxScopeRules widens
// the scope to every kind instead of growing it.
func TestScopeIsBounded(t *testing.T) {
	var s Scope
	for i := 0; i <= maxScopeRules; i++ {
		s.add(TargetScope(configv1alpha1.CustomizationTarget{APIVersion: "example.com/v1", Kind: fmt.Sprintf("K%d", i)}))
		s.add(TargetScope(configv1alpha1.CustomizationTarget{APIVersion: "example.com/v1", Kind: "K0"})) // a duplicate adds nothing
	}
	if !s.all || len(s.rules) != 0 {
		t.Fatalf("scope after %d kinds: all=%v with %d rules; want every kind, no rules", maxScopeRules+1, s.all, len(s.rules))
	}
	if !s.Matches(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}) {
		t.Errorf("widened scope does not match Pod")
	}
}
