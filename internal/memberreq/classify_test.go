package memberreq

import (
	"net/http/httptest"
	"testing"
)

// TestClassify is the table of the hub's role gate and the agent's
// read-only mode: a viewer's requests are the ReadOnly ones. Connect subresources need Write whatever the method
// (a WebSocket exec is a GET).
func TestClassify(t *testing.T) {
	tests := []struct {
		name, method, path string
		verb, resource     string
		readOnly           bool
	}{
		{"list pods", "GET", "/api/v1/namespaces/dev/pods", "list", "pods", true},
		{"get pod", "GET", "/api/v1/namespaces/dev/pods/web", "get", "pods", true},
		{"watch pods", "GET", "/api/v1/pods?watch=true", "watch", "pods", true},
		{"logs", "GET", "/api/v1/namespaces/dev/pods/web/log?follow=true", "get", "pods/log", true},
		{"events", "GET", "/apis/events.k8s.io/v1/events", "list", "events", true},
		{"discovery", "GET", "/apis", "get", "", true},
		{"version", "GET", "/version", "get", "", true},
		{"exec over SPDY", "POST", "/api/v1/namespaces/dev/pods/web/exec?command=sh", "connect", "pods/exec", false},
		{"exec over WebSocket", "GET", "/api/v1/namespaces/dev/pods/web/exec?command=sh", "connect", "pods/exec", false},
		{"attach", "GET", "/api/v1/namespaces/dev/pods/web/attach", "connect", "pods/attach", false},
		{"port-forward", "GET", "/api/v1/namespaces/dev/pods/web/portforward", "connect", "pods/portforward", false},
		{"service proxy", "GET", "/api/v1/namespaces/dev/services/web/proxy/x", "connect", "services/proxy", false},
		{"node proxy", "GET", "/api/v1/nodes/n1/proxy/metrics", "connect", "nodes/proxy", false},
		{"create", "POST", "/api/v1/namespaces/dev/configmaps", "create", "configmaps", false},
		{"patch", "PATCH", "/apis/apps/v1/namespaces/dev/deployments/web", "patch", "deployments", false},
		{"delete", "DELETE", "/api/v1/namespaces/dev/pods/web", "delete", "pods", false},
		{"non-resource post", "POST", "/version", "post", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Classify(httptest.NewRequest(tt.method, tt.path, nil))
			if err != nil {
				t.Fatalf("Classify(%s %s) = %v", tt.method, tt.path, err)
			}
			if got.Verb != tt.verb || got.Resource != tt.resource || got.ReadOnly != tt.readOnly {
				t.Errorf("Classify(%s %s) = %s %s read-only %v; want %s %s read-only %v", tt.method, tt.path, got.Verb, got.Resource, got.ReadOnly, tt.verb, tt.resource, tt.readOnly)
			}
		})
	}
}
