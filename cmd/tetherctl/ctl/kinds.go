package ctl

// Kind resolution as kubectl does it: a kind argument (plural, singular,
// short name, Kind.version.group, plural.group) names a built-in or Tether
// kind without asking the hub; anything else is looked up in the kinds the
// hub knows of, the CustomResourceDefinitions it stores as templates first
// and then the APIs its member clusters' agents report. A name that fits
// several kinds is refused with the candidates, never guessed.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/version"

	"github.com/tetherproj/tether/client"
)

// hubKind is a kind the hub knows of, with the names that resolve to it.
type hubKind struct {
	spec  kindSpec
	group string
	// names are its lower-case plural, singular, short names and the
	// plural.group, singular.group forms.
	names []string
}

// resolveKind resolves a kind argument, asking the hub (through dial) only
// for names that are not built-in.
func resolveKind(ctx context.Context, name string) (kindSpec, error) {
	if k, ok := kindsByName[strings.ToLower(name)]; ok {
		return k, nil
	}
	c, err := dial(ctx)
	if err != nil {
		return kindSpec{}, err
	}
	defer c.Close()
	crds, err := crdKinds(ctx, c)
	if err != nil {
		return kindSpec{}, err
	}
	if k, found, err := pickKind(name, crds); found || err != nil {
		return k, err
	}
	reported, err := reportedKinds(ctx, c)
	if err != nil {
		return kindSpec{}, err
	}
	if k, found, err := pickKind(name, reported); found || err != nil {
		return k, err
	}
	if k, ok := fullKindName(name); ok {
		return k, nil
	}
	return kindSpec{}, fmt.Errorf("unknown kind %q: not a built-in or Tether kind (deployments, pp ...), nor a kind of a CustomResourceDefinition the hub holds or an API a member cluster reports; for another custom resource use Kind.version.group (Widget.v1.example.com)", name)
}

// pickKind finds name among kinds: found with the one kind it names, or an
// error listing the candidates when it names several.
func pickKind(name string, kinds []hubKind) (kindSpec, bool, error) {
	l := strings.ToLower(name)
	full, isFull := fullKindName(name)
	var hits []hubKind
	for _, k := range kinds {
		switch {
		case slices.Contains(k.names, l):
			hits = append(hits, k)
		case isFull && strings.EqualFold(full.kind, k.spec.kind) && groupOf(full.apiVersion) == k.group:
			// Kind.version.group at any version: the definition's names
			// and scope, the version asked for.
			k.spec.apiVersion = full.apiVersion
			hits = append(hits, k)
		}
	}
	switch len(hits) {
	case 0:
		return kindSpec{}, false, nil
	case 1:
		return hits[0].spec, true, nil
	}
	var cands []string
	for _, h := range hits {
		cands = append(cands, fullName(h))
	}
	slices.Sort(cands)
	return kindSpec{}, true, fmt.Errorf("kind %q is ambiguous: it names %s; use one of these", name, strings.Join(cands, ", "))
}

// fullName is Kind.version.group (Kind.version for the core group).
func fullName(k hubKind) string {
	_, v, _ := strings.Cut(k.spec.apiVersion, "/")
	if k.group == "" {
		return k.spec.kind + "." + k.spec.apiVersion
	}
	return k.spec.kind + "." + v + "." + k.group
}

// fullKindName reads Kind.version.group for a custom resource the hub has
// no definition of (namespaced, as the hub assumes without its CRD).
func fullKindName(name string) (kindSpec, bool) {
	kind, gv, ok := strings.Cut(name, ".")
	if !ok || kind == "" {
		return kindSpec{}, false
	}
	v, group, ok := strings.Cut(gv, ".")
	if !ok || v == "" || group == "" {
		return kindSpec{}, false
	}
	return kindSpec{apiVersion: group + "/" + v, kind: kind, plural: plural(kind), namespaced: true, template: true}, true
}

// crd is what resolution reads of a CustomResourceDefinition.
type crd struct {
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind       string   `json:"kind"`
			Plural     string   `json:"plural"`
			Singular   string   `json:"singular"`
			ShortNames []string `json:"shortNames"`
		} `json:"names"`
		Scope    string `json:"scope"`
		Versions []struct {
			Name    string `json:"name"`
			Served  bool   `json:"served"`
			Storage bool   `json:"storage"`
		} `json:"versions"`
	} `json:"spec"`
}

// crdKinds lists the kinds defined by the CRDs the hub stores.
func crdKinds(ctx context.Context, c *client.Client) ([]hubKind, error) {
	crdKind := kindsByName["crd"]
	crds, _, err := c.List(ctx, client.Selector{APIVersion: crdKind.apiVersion, Kind: crdKind.kind}, 0)
	if err != nil {
		return nil, err
	}
	var out []hubKind
	for _, o := range crds {
		if k, ok := kindOfCRD(o.GetObjectJson()); ok {
			out = append(out, k)
		}
	}
	return out, nil
}

// kindOfCRD is the kind a CRD defines, at its storage version (else its
// first served one); ok is false for a CRD too broken to name a kind.
func kindOfCRD(js []byte) (hubKind, bool) {
	var c crd
	if json.Unmarshal(js, &c) != nil || c.Spec.Group == "" || c.Spec.Names.Kind == "" || len(c.Spec.Versions) == 0 {
		return hubKind{}, false
	}
	v := c.Spec.Versions[0].Name
	for _, cv := range c.Spec.Versions {
		if cv.Storage {
			v = cv.Name
		}
	}
	n := c.Spec.Names
	if n.Plural == "" {
		n.Plural = plural(n.Kind)
	}
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	k := hubKind{group: c.Spec.Group, spec: kindSpec{apiVersion: c.Spec.Group + "/" + v, kind: n.Kind, plural: n.Plural,
		namespaced: c.Spec.Scope != "Cluster", template: true, replicated: replicatedKinds[n.Kind]}}
	k.names = kindNames(c.Spec.Group, n.Plural, n.Singular, n.ShortNames...)
	return k, true
}

// kindNames are the lower-case names of a kind: plural, singular, short
// names, and plural.group and singular.group for a named group.
func kindNames(group, plural, singular string, short ...string) []string {
	names := []string{strings.ToLower(plural), strings.ToLower(singular)}
	for _, s := range short {
		names = append(names, strings.ToLower(s))
	}
	if group != "" {
		names = append(names, strings.ToLower(plural+"."+group), strings.ToLower(singular+"."+group))
	}
	return names
}

// reportedCluster is what resolution reads of a Cluster object: the APIs
// its agent last reported.
type reportedCluster struct {
	Status struct {
		APIEnablements []struct {
			GroupVersion string `json:"groupVersion"`
			Resources    []struct {
				Name string `json:"name"`
				Kind string `json:"kind"`
			} `json:"resources"`
		} `json:"apiEnablements"`
	} `json:"status"`
}

// reportedKinds lists the kinds member clusters' agents report serving,
// one per group and kind at its highest version (Kubernetes' version
// order: v2 > v1 > v1beta1). Their scope is unknown: namespaced, as the
// hub assumes for a kind it holds no definition of.
func reportedKinds(ctx context.Context, c *client.Client) ([]hubKind, error) {
	clusters, err := c.ListClusters(ctx, client.ClusterSelector{WithObjects: true})
	if err != nil {
		return nil, err
	}
	byGK := map[string]hubKind{}
	var order []string
	for _, cl := range clusters {
		var rc reportedCluster
		if json.Unmarshal(cl.GetObjectJson(), &rc) != nil {
			continue
		}
		for _, e := range rc.Status.APIEnablements {
			for _, r := range e.Resources {
				if r.Kind == "" || r.Name == "" || strings.Contains(r.Name, "/") { // subresources
					continue
				}
				k := reportedKind(e.GroupVersion, r.Name, r.Kind)
				key := k.group + "/" + k.spec.kind
				old, seen := byGK[key]
				if !seen {
					order = append(order, key)
				}
				if !seen || version.CompareKubeAwareVersionStrings(versionOf(k), versionOf(old)) > 0 {
					byGK[key] = k
				}
			}
		}
	}
	out := make([]hubKind, 0, len(order))
	for _, key := range order {
		out = append(out, byGK[key])
	}
	return out, nil
}

func reportedKind(groupVersion, resource, kind string) hubKind {
	group, _, _ := strings.Cut(groupVersion, "/")
	if !strings.Contains(groupVersion, "/") {
		group = ""
	}
	return hubKind{group: group, spec: kindSpec{apiVersion: groupVersion, kind: kind, plural: resource,
		namespaced: true, template: true, replicated: replicatedKinds[kind]},
		names: kindNames(group, resource, strings.ToLower(kind))}
}

// groupOf is the group of an apiVersion, "" for the core group.
func groupOf(apiVersion string) string {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return group
}

// versionOf is the version of k's apiVersion.
func versionOf(k hubKind) string {
	if _, v, ok := strings.Cut(k.spec.apiVersion, "/"); ok {
		return v
	}
	return k.spec.apiVersion
}
