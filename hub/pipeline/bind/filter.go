package bind

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tetherproj/tether/api/codec"
	"github.com/tetherproj/tether/hub/store"
)

// ReservedNamespaces are never propagated, whatever the options: Tether's
// own namespace, and Karmada's (objects copied from a Karmada control plane
// into them are Karmada's own, not workloads).
var ReservedNamespaces = []string{"tether-system", "karmada-system", "karmada-cluster"}

// reservedPrefix marks Karmada's execution namespaces (karmada-es-<cluster>).
const reservedPrefix = "karmada-es-"

// DefaultSkippedNamespaces are the default skipped-namespace patterns,
// Karmada's --skipped-propagating-namespaces default: every kube-*
// namespace.
var DefaultSkippedNamespaces = []string{"kube-.*"}

// ClaimedByLabels mark templates another controller owns (Karmada's
// MultiClusterService, and Tether's spelling); the detector ignores them.
var ClaimedByLabels = []string{"resourcetemplate.karmada.io/claimed-by", "resourcetemplate.tether.io/claimed-by"}

// Filter decides which templates the detector looks at (spec §2.2, "events
// filtered out before matching").
type Filter struct {
	skipped []*regexp.Regexp
}

// NewFilter compiles the skipped-namespace patterns, each anchored as
// ^pattern$.
func NewFilter(skipped []string) (*Filter, error) {
	f := &Filter{}
	for _, s := range skipped {
		re, err := regexp.Compile("^" + s + "$")
		if err != nil {
			return nil, fmt.Errorf("skipped namespace pattern %q: %w", s, err)
		}
		f.skipped = append(f.skipped, re)
	}
	return f, nil
}

// Ignored reports whether t is not a template for the detector: in a
// reserved or skipped namespace, kube-system's
// extension-apiserver-authentication ConfigMap, or claimed by another
// controller.
func (f *Filter) Ignored(t *Template) bool {
	ns := t.Ref.Namespace
	if f.NamespaceIgnored(ns) {
		return true
	}
	if ns == "kube-system" && t.Ref.Group == "" && t.Ref.Kind == "ConfigMap" && t.Ref.Name == "extension-apiserver-authentication" {
		return true
	}
	l := t.Obj.GetLabels()
	for _, k := range ClaimedByLabels {
		if _, ok := l[k]; ok {
			return true
		}
	}
	return false
}

// NamespaceIgnored reports whether ns is reserved or skipped.
func (f *Filter) NamespaceIgnored(ns string) bool {
	if ns == "" {
		return false
	}
	for _, r := range ReservedNamespaces {
		if ns == r {
			return true
		}
	}
	if strings.HasPrefix(ns, reservedPrefix) {
		return true
	}
	for _, re := range f.skipped {
		if re.MatchString(ns) {
			return true
		}
	}
	return false
}

// OwnGroup reports whether group is one of Tether's API groups (or a
// Karmada alias): objects there are policies, customizations, clusters or
// bindings, never templates. codec.OwnGroup looks at the group only.
func OwnGroup(ref store.ObjectRef) bool {
	return ref.Group != "" && codec.OwnGroup(ref.Group+"/v1alpha1")
}
