package customizations

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// maxScopeRules bounds the rules one Scope holds: past it the scope widens
// to every kind, so that a burst of changes to many customizations costs
// one pass over every template instead of a growing list.
const maxScopeRules = 256

// Scope is the kinds a change of the interpreter's customizations concerns:
// the target of a ResourceInterpreterCustomization (its exact apiVersion
// and kind) or the rules of a webhook configuration. A template whose kind
// the scope matches may interpret, and so render, differently. The zero
// Scope matches nothing.
type Scope struct {
	rules []configv1alpha1.Rule
	all   bool
}

// Empty reports whether s matches nothing.
func (s Scope) Empty() bool { return !s.all && len(s.rules) == 0 }

// Matches reports whether s concerns gvk.
func (s Scope) Matches(gvk schema.GroupVersionKind) bool {
	if s.all {
		return true
	}
	for _, r := range s.rules {
		if match(r.APIGroups, gvk.Group) && match(r.APIVersions, gvk.Version) && match(r.Kinds, gvk.Kind) {
			return true
		}
	}
	return false
}

// add widens s to o as well.
func (s *Scope) add(o Scope) {
	if s.all {
		return
	}
	if o.all {
		*s = Scope{all: true}
		return
	}
	for _, r := range o.rules {
		if !slices.ContainsFunc(s.rules, func(q configv1alpha1.Rule) bool { return sameRule(q, r) }) {
			s.rules = append(s.rules, r)
		}
	}
	if len(s.rules) > maxScopeRules {
		*s = Scope{all: true}
	}
}

// TargetScope is the scope of a customization: its target kind, exactly.
func TargetScope(t configv1alpha1.CustomizationTarget) Scope {
	gv, err := schema.ParseGroupVersion(t.APIVersion)
	if err != nil || t.Kind == "" {
		return Scope{} // the interpreter applies such a target to nothing
	}
	return Scope{rules: []configv1alpha1.Rule{{APIGroups: []string{gv.Group}, APIVersions: []string{gv.Version}, Kinds: []string{t.Kind}}}}
}

// WebhookScope is the scope of a webhook configuration: the kinds of every
// rule of every hook, whatever the operations.
func WebhookScope(cfg *configv1alpha1.ResourceInterpreterWebhookConfiguration) Scope {
	var s Scope
	for _, h := range cfg.Webhooks {
		for _, r := range h.Rules {
			s.add(Scope{rules: []configv1alpha1.Rule{r.Rule}})
		}
	}
	return s
}

func match(list []string, s string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, s)
}

func sameRule(a, b configv1alpha1.Rule) bool {
	return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.APIVersions, b.APIVersions) && slices.Equal(a.Kinds, b.Kinds)
}
