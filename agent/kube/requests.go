package kube

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
)

// applyPatchType is the Content-Type of a server-side apply.
const applyPatchType = "application/apply-patch+yaml"

// Requests counts the requests sent through the rest.Configs it wraps,
// by verb and resource as the API server names them (RequestKind): what
// the agent costs its member, comparable with a direct client's.
type Requests struct {
	total *prometheus.CounterVec
}

// NewRequests registers tether_agent_member_requests_total{verb,resource}
// with reg.
func NewRequests(reg prometheus.Registerer) *Requests {
	total := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tether_agent_member_requests_total",
		Help: "Requests the agent sent to its member API server, by verb (get, list, watch, create, update, patch, apply, delete, deletecollection; a non-resource request's HTTP method) and resource (resource[/subresource]; discovery, or a non-resource path).",
	}, []string{"verb", "resource"})
	reg.MustRegister(total)
	return &Requests{total: total}
}

// Wrap has every client built from cfg afterwards count its requests.
func (r *Requests) Wrap(cfg *rest.Config) {
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			r.total.WithLabelValues(RequestKind(req)).Inc()
			return next.RoundTrip(req)
		})
	})
}

// roundTripper is a function as an http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// RequestKind names a request to a Kubernetes API server as the server
// does (its RequestInfo): the verb and the resource, with its
// subresource after a slash. A request outside the resource paths is its
// HTTP method, lower case, and "discovery" (/api, /apis and a group
// version's list) or its path's first segment (/readyz, /version, …).
func RequestKind(req *http.Request) (verb, resource string) {
	parts := splitPath(req.URL.Path)
	rest, ok := resourceParts(parts)
	if !ok {
		return strings.ToLower(req.Method), nonResource(parts)
	}
	if len(rest) > 2 && rest[0] == "namespaces" && rest[2] != "status" && rest[2] != "finalize" {
		rest = rest[2:] // namespaces/NS/resource/...; not a Namespace's own subresource
	}
	resource = rest[0]
	named := len(rest) >= 2
	if len(rest) >= 3 {
		resource += "/" + rest[2]
	}
	return resourceVerb(req, named), resource
}

// splitPath is a URL path's segments, without empty ones.
func splitPath(path string) []string {
	var out []string
	for _, p := range strings.Split(path, "/") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// resourceParts is what follows /api/VERSION or /apis/GROUP/VERSION; not
// ok when nothing does (discovery, or a non-resource path).
func resourceParts(parts []string) ([]string, bool) {
	switch {
	case len(parts) > 2 && parts[0] == "api":
		return parts[2:], true
	case len(parts) > 3 && parts[0] == "apis":
		return parts[3:], true
	}
	return nil, false
}

// nonResource names a path outside the resources.
func nonResource(parts []string) string {
	if len(parts) == 0 {
		return "/"
	}
	if parts[0] == "api" || parts[0] == "apis" {
		return "discovery"
	}
	return "/" + parts[0]
}

// resourceVerb is the API server's verb of a resource request.
func resourceVerb(req *http.Request, named bool) string {
	switch req.Method {
	case http.MethodGet:
		switch {
		case named:
			return "get"
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			return "watch"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		if strings.HasPrefix(req.Header.Get("Content-Type"), applyPatchType) {
			return "apply"
		}
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return strings.ToLower(req.Method)
}
