package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Discovery's media types: aggregated discovery (one document for all of
// /api or /apis) first, the legacy lists otherwise.
const (
	acceptAggregated = runtime.ContentTypeJSON + ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	acceptDiscovery  = acceptAggregated + "," + runtime.ContentTypeJSON
)

// PartialError names the group versions discovery could not describe;
// Discover returns the others with it.
type PartialError struct {
	// Failed is why each group version is missing.
	Failed map[schema.GroupVersion]error
}

func (e *PartialError) Error() string {
	var parts []string
	for gv, err := range e.Failed {
		parts = append(parts, fmt.Sprintf("%s: %v", gv, err))
	}
	sort.Strings(parts)
	return "kube: group versions not discovered: " + strings.Join(parts, "; ")
}

// Discover returns one list per group version the server serves, core
// first, each group's versions in its order of preference, without
// subresources. Group versions it could not describe are left out and
// named by a *PartialError returned with the rest; any other error
// returns no list.
func (c *Client) Discover(ctx context.Context) ([]*metav1.APIResourceList, error) {
	failed := map[schema.GroupVersion]error{}
	var lists []*metav1.APIResourceList
	for _, path := range []string{"/api", "/apis"} {
		l, err := c.discoverPath(ctx, path, failed)
		if err != nil {
			return nil, err
		}
		lists = append(lists, l...)
	}
	if len(failed) > 0 {
		return lists, &PartialError{Failed: failed}
	}
	return lists, nil
}

// discoverPath discovers what /api or /apis holds: from its aggregated
// document, or one request per group version.
func (c *Client) discoverPath(ctx context.Context, path string, failed map[schema.GroupVersion]error) ([]*metav1.APIResourceList, error) {
	var contentType string
	body, err := c.rest.Get().AbsPath(path).SetHeader("Accept", c.accept).Do(ctx).ContentType(&contentType).Raw()
	if err != nil {
		return nil, fmt.Errorf("kube: discover %s: %w", path, err)
	}
	if aggregated(contentType) {
		var doc apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(body, &doc); err != nil {
			return nil, fmt.Errorf("kube: discover %s: decode: %w", path, err)
		}
		return fromAggregated(doc, failed), nil
	}
	gvs, err := legacyVersions(path, body)
	if err != nil {
		return nil, err
	}
	var lists []*metav1.APIResourceList
	for _, gv := range gvs {
		l, err := c.Resources(ctx, gv)
		if err != nil {
			failed[gv] = err
			continue
		}
		lists = append(lists, l)
	}
	return lists, nil
}

// aggregated says whether a response's Content-Type is aggregated
// discovery v2.
func aggregated(contentType string) bool {
	_, params, err := mime.ParseMediaType(contentType)
	return err == nil && params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" && params["as"] == "APIGroupDiscoveryList"
}

// fromAggregated turns an aggregated document into lists; stale group
// versions go to failed.
func fromAggregated(doc apidiscoveryv2.APIGroupDiscoveryList, failed map[schema.GroupVersion]error) []*metav1.APIResourceList {
	var lists []*metav1.APIResourceList
	for _, g := range doc.Items {
		for _, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			if v.Freshness == apidiscoveryv2.DiscoveryFreshnessStale {
				failed[gv] = fmt.Errorf("stale discovery of %s", gv)
				continue
			}
			l := &metav1.APIResourceList{GroupVersion: gv.String()}
			for _, r := range v.Resources {
				if r.ResponseKind == nil || r.ResponseKind.Kind == "" {
					continue // no kind to map (client-go drops these too)
				}
				l.APIResources = append(l.APIResources, metav1.APIResource{
					Name: r.Resource, SingularName: r.SingularResource, Namespaced: r.Scope == apidiscoveryv2.ScopeNamespace,
					Group: r.ResponseKind.Group, Version: r.ResponseKind.Version, Kind: r.ResponseKind.Kind,
					Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
				})
			}
			lists = append(lists, l)
		}
	}
	return lists
}

// legacyVersions are the group versions of a legacy /api (APIVersions) or
// /apis (APIGroupList) document, each group's preferred version first.
func legacyVersions(path string, body []byte) ([]schema.GroupVersion, error) {
	var gvs []schema.GroupVersion
	if path == "/api" {
		var v metav1.APIVersions
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, fmt.Errorf("kube: discover %s: decode: %w", path, err)
		}
		for _, version := range v.Versions {
			gvs = append(gvs, schema.GroupVersion{Version: version})
		}
		return gvs, nil
	}
	var groups metav1.APIGroupList
	if err := json.Unmarshal(body, &groups); err != nil {
		return nil, fmt.Errorf("kube: discover %s: decode: %w", path, err)
	}
	for _, g := range groups.Groups {
		preferred := g.PreferredVersion.Version
		if preferred != "" {
			gvs = append(gvs, schema.GroupVersion{Group: g.Name, Version: preferred})
		}
		for _, v := range g.Versions {
			if v.Version != preferred {
				gvs = append(gvs, schema.GroupVersion{Group: g.Name, Version: v.Version})
			}
		}
	}
	return gvs, nil
}

// Resources returns the resources of one group version (one request),
// without subresources; a group version the server does not serve is an
// error apierrors.IsNotFound recognizes.
func (c *Client) Resources(ctx context.Context, gv schema.GroupVersion) (*metav1.APIResourceList, error) {
	path := "/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	body, err := c.rest.Get().AbsPath(path).SetHeader("Accept", runtime.ContentTypeJSON).Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("kube: discover %s: %w", gv, err)
	}
	var l metav1.APIResourceList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("kube: discover %s: decode: %w", gv, err)
	}
	out := &metav1.APIResourceList{GroupVersion: gv.String()}
	for _, r := range l.APIResources {
		if !strings.Contains(r.Name, "/") {
			out.APIResources = append(out.APIResources, r)
		}
	}
	return out, nil
}

// Preferred keeps each resource of lists (as Discover orders them) once:
// from its group's most preferred version that serves it.
func Preferred(lists []*metav1.APIResourceList) []*metav1.APIResourceList {
	seen := map[schema.GroupResource]bool{}
	var out []*metav1.APIResourceList
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		kept := &metav1.APIResourceList{GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
			if !seen[gr] {
				seen[gr] = true
				kept.APIResources = append(kept.APIResources, r)
			}
		}
		if len(kept.APIResources) > 0 {
			out = append(out, kept)
		}
	}
	return out
}
