package memberproxy

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/tetherproj/tether/hub/clientapi"
)

// PathPrefix is where the hub serves each member's API: Karmada's cluster
// proxy path, so that tooling written for Karmada finds it,
// PathPrefix + NAME + "/proxy/" + the member's path.
const PathPrefix = "/apis/cluster.karmada.io/v1alpha1/clusters/"

// route splits a proxy URL path into the cluster's name and the member's
// path ("/" at least); ok is false for any other path.
func route(path string) (cluster, memberPath string, ok bool) {
	rest, found := strings.CutPrefix(path, PathPrefix)
	if !found {
		return "", "", false
	}
	cluster, rest, found = strings.Cut(rest, "/")
	if cluster == "" {
		return "", "", false
	}
	switch {
	case found && rest == "proxy":
		return cluster, "/", true
	case found && strings.HasPrefix(rest, "proxy/"):
		return cluster, rest[len("proxy"):], true
	}
	return "", "", false
}

// requestInfos parses member paths the way kube-apiserver does.
var requestInfos = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// connectSubresources open a stream into a pod, a node or a service: they
// need write access whatever the HTTP method (a WebSocket exec is a GET).
var connectSubresources = map[string]bool{"exec": true, "attach": true, "portforward": true, "proxy": true}

// readVerbs are the verbs a viewer may use.
var readVerbs = map[string]bool{"get": true, "list": true, "watch": true, "head": true, "options": true}

// Request is what the hub knows of one proxied request, for the role gate
// and the audit line.
type Request struct {
	// Verb is kube-apiserver's verb (get, list, watch, create, ...), or
	// "connect" for the connect subresources (exec, attach, portforward,
	// proxy), whatever the HTTP method.
	Verb string
	// Resource is resource[/subresource], empty for a non-resource path.
	Resource string
	// Namespace is the request's namespace, if any.
	Namespace string
	// Access is what the request needs of the hub's role.
	Access clientapi.Access
}

// classify parses r, whose URL path is the member's path.
func classify(r *http.Request) (Request, error) {
	info, err := requestInfos.NewRequestInfo(r)
	if err != nil {
		return Request{}, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	req := Request{Verb: info.Verb, Namespace: info.Namespace}
	if info.IsResourceRequest {
		req.Resource = info.Resource
		if info.Subresource != "" {
			req.Resource += "/" + info.Subresource
		}
		if connectSubresources[info.Subresource] {
			req.Verb = "connect"
		}
	}
	req.Access = clientapi.Write
	if readVerbs[req.Verb] {
		req.Access = clientapi.Read
	}
	return req, nil
}
