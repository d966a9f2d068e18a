// Package memberreq is what the hub and the agent both decide about a
// request to a member's API server through the member proxy (DESIGN §11),
// so that each decision has one place: Classify (its verb, resource and
// whether it only reads: the hub's role gate and the agent's read-only
// mode ask the same question), the hub's path of each member (PathPrefix,
// ProxyPath), and the identity the hub impersonates
// (UserPrefix, UsersGroup, RoleGroupPrefix), which the agent checks; and
// how both ends answer: Recorder (the status code for their audit lines)
// and WriteStatus (a refusal as a Kubernetes Status kubectl prints).
//
// It imports only the kubernetes api machinery and
// k8s.io/apiserver/pkg/endpoints/request (kube-apiserver's request
// parsing).
package memberreq

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// The identity the hub sets on every proxied request: Impersonate-User
// UserPrefix + the hub user's name, Impersonate-Group UsersGroup and
// RoleGroupPrefix + the user's role. The agent accepts no name outside
// UserPrefix, so that the member's RBAC decides only what bindings to
// "tether:" subjects allow.
const (
	UserPrefix      = "tether:"
	UsersGroup      = "tether:users"
	RoleGroupPrefix = "tether:role:"
)

// SessionsPerCluster is the default bound on one cluster's proxied
// requests in flight, on the hub (per cluster) and on the agent (its
// member): it stays under the hub's streams per agent connection
// (agentapi.DefaultMaxConcurrentStreams, 100), so that a tunnel past it is
// refused, not left waiting for a stream.
const SessionsPerCluster = 64

// PathPrefix is where the hub serves each member's API: Karmada's cluster
// proxy path, so that tooling written for Karmada finds it:
// PathPrefix + NAME + "/proxy/" + the member's path.
const PathPrefix = "/apis/cluster.karmada.io/v1alpha1/clusters/"

// ProxyPath is the base path of cluster's API on the hub.
func ProxyPath(cluster string) string { return PathPrefix + cluster + "/proxy" }

// requestInfos parses member paths the way kube-apiserver does.
var requestInfos = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// connectSubresources open a stream into a pod, a node or a service: they
// are never reads, whatever the HTTP method (a WebSocket exec is a GET).
var connectSubresources = map[string]bool{"exec": true, "attach": true, "portforward": true, "proxy": true}

// readVerbs are the verbs that only read.
var readVerbs = map[string]bool{"get": true, "list": true, "watch": true, "head": true, "options": true}

// Info is what the proxy knows of one request.
type Info struct {
	// Verb is kube-apiserver's verb (get, list, watch, create, ...), or
	// "connect" for the connect subresources (exec, attach, portforward,
	// proxy), whatever the HTTP method.
	Verb string
	// Resource is resource[/subresource], empty for a non-resource path.
	Resource string
	// Namespace is the request's namespace, if any.
	Namespace string
	// ReadOnly: the request only reads (get, list, watch of anything but
	// a connect subresource; GET of a non-resource path).
	ReadOnly bool
}

// Classify parses r, whose URL path is the member's path.
func Classify(r *http.Request) (Info, error) {
	ri, err := requestInfos.NewRequestInfo(r)
	if err != nil {
		return Info{}, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	info := Info{Verb: ri.Verb, Namespace: ri.Namespace}
	if ri.IsResourceRequest {
		info.Resource = ri.Resource
		if ri.Subresource != "" {
			info.Resource += "/" + ri.Subresource
		}
		if connectSubresources[ri.Subresource] {
			info.Verb = "connect"
		}
	}
	info.ReadOnly = readVerbs[info.Verb]
	return info, nil
}
