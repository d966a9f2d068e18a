package bind

import (
	"testing"
)

func TestAutoPropagated(t *testing.T) {
	f, err := NewFilter(DefaultSkippedNamespaces)
	if err != nil {
		t.Fatal(err)
	}
	ns := func(name string, labels map[string]string) *Template { return tmpl("v1", "Namespace", name, 3, labels) }
	tests := []struct {
		name string
		t    *Template
		want bool
	}{
		{"plain namespace", ns("shop", nil), true},
		{"kube-* skipped by default", ns("kube-extra", nil), false},
		{"default is never propagated", ns("default", nil), false},
		{"reserved", ns("karmada-system", nil), false},
		{"execution space", ns("karmada-es-edge-1", nil), false},
		{"Karmada's opt-out label", ns("private", map[string]string{SkipAutoPropagationLabels[0]: "True"}), false},
		{"Tether's opt-out label", ns("private", map[string]string{SkipAutoPropagationLabels[1]: "true"}), false},
		{"opt-out label not true", ns("shop", map[string]string{SkipAutoPropagationLabels[0]: "false"}), true},
		{"not a Namespace", tmpl("v1", "ConfigMap", "shop/cm", 3, nil), false},
		{"a Namespace kind of another group", tmpl("example.io/v1", "Namespace", "shop", 3, nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.AutoPropagated(tt.t); got != tt.want {
				t.Errorf("AutoPropagated(%s) = %v; want %v", tt.t.Ref.Name, got, tt.want)
			}
		})
	}
}

func TestDecideNamespace(t *testing.T) {
	shop := tmpl("v1", "Namespace", "shop", 10, nil)
	cpp := pol("namespaces", 0, deploys(selAll("v1", "Namespace")))
	tests := []struct {
		name string
		in   Input
		want Verdict
	}{
		{"no policy: auto-propagated", Input{Template: shop, AutoNamespace: true}, AutoPropagate},
		{"a matching ClusterPropagationPolicy wins", Input{Template: shop, AutoNamespace: true, CPPs: []*Policy{cpp}}, Bind},
		{"opted out, never propagated: waits", Input{Template: shop}, Wait},
		{"opted out after auto-propagation: released", Input{Template: shop, Current: &Current{Auto: true}}, Release},
		{"policy deleted: back to auto-propagation", Input{Template: shop, AutoNamespace: true,
			Current: &Current{Claim: &Claim{Policy: cpp.Ref, ID: cpp.ID}}}, AutoPropagate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.in); got.Verdict != tt.want {
				t.Errorf("Decide = %s; want %s", got, tt.want)
			}
		})
	}
}
