package memberproxy

import (
	"net/http/httptest"
	"testing"

	"github.com/tetherproj/tether/hub/clientapi"
)

func TestRoute(t *testing.T) {
	tests := []struct {
		path, cluster, member string
		ok                    bool
	}{
		{PathPrefix + "edge-1/proxy/api/v1/pods", "edge-1", "/api/v1/pods", true},
		{PathPrefix + "edge-1/proxy/", "edge-1", "/", true},
		{PathPrefix + "edge-1/proxy", "edge-1", "/", true},
		{PathPrefix + "edge-1/proxyx/api", "", "", false},
		{PathPrefix + "edge-1", "", "", false},
		{PathPrefix + "/proxy/api", "", "", false},
		{"/api/v1/pods", "", "", false},
	}
	for _, tt := range tests {
		cluster, member, ok := route(tt.path)
		if cluster != tt.cluster || member != tt.member || ok != tt.ok {
			t.Errorf("route(%q) = %q, %q, %v; want %q, %q, %v", tt.path, cluster, member, ok, tt.cluster, tt.member, tt.ok)
		}
	}
}

// TestClassify is the role gate's table: a viewer's requests are those
// with Access Read. Connect subresources need Write whatever the method
// (a WebSocket exec is a GET).
func TestClassify(t *testing.T) {
	tests := []struct {
		name, method, path string
		verb, resource     string
		access             clientapi.Access
	}{
		{"list pods", "GET", "/api/v1/namespaces/dev/pods", "list", "pods", clientapi.Read},
		{"get pod", "GET", "/api/v1/namespaces/dev/pods/web", "get", "pods", clientapi.Read},
		{"watch pods", "GET", "/api/v1/pods?watch=true", "watch", "pods", clientapi.Read},
		{"logs", "GET", "/api/v1/namespaces/dev/pods/web/log?follow=true", "get", "pods/log", clientapi.Read},
		{"events", "GET", "/apis/events.k8s.io/v1/events", "list", "events", clientapi.Read},
		{"discovery", "GET", "/apis", "get", "", clientapi.Read},
		{"version", "GET", "/version", "get", "", clientapi.Read},
		{"exec over SPDY", "POST", "/api/v1/namespaces/dev/pods/web/exec?command=sh", "connect", "pods/exec", clientapi.Write},
		{"exec over WebSocket", "GET", "/api/v1/namespaces/dev/pods/web/exec?command=sh", "connect", "pods/exec", clientapi.Write},
		{"attach", "GET", "/api/v1/namespaces/dev/pods/web/attach", "connect", "pods/attach", clientapi.Write},
		{"port-forward", "GET", "/api/v1/namespaces/dev/pods/web/portforward", "connect", "pods/portforward", clientapi.Write},
		{"service proxy", "GET", "/api/v1/namespaces/dev/services/web/proxy/x", "connect", "services/proxy", clientapi.Write},
		{"node proxy", "GET", "/api/v1/nodes/n1/proxy/metrics", "connect", "nodes/proxy", clientapi.Write},
		{"create", "POST", "/api/v1/namespaces/dev/configmaps", "create", "configmaps", clientapi.Write},
		{"patch", "PATCH", "/apis/apps/v1/namespaces/dev/deployments/web", "patch", "deployments", clientapi.Write},
		{"delete", "DELETE", "/api/v1/namespaces/dev/pods/web", "delete", "pods", clientapi.Write},
		{"non-resource post", "POST", "/version", "post", "", clientapi.Write},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := classify(httptest.NewRequest(tt.method, tt.path, nil))
			if err != nil {
				t.Fatalf("classify(%s %s) = %v", tt.method, tt.path, err)
			}
			if got.Verb != tt.verb || got.Resource != tt.resource || got.Access != tt.access {
				t.Errorf("classify(%s %s) = %s %s %s; want %s %s %s", tt.method, tt.path, got.Verb, got.Resource, got.Access, tt.verb, tt.resource, tt.access)
			}
		})
	}
}
