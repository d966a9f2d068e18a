package kube_test

import (
	"net/http/httptest"
	"testing"

	"github.com/tetherproj/tether/agent/kube"
)

func TestRequestKind(t *testing.T) {
	tests := []struct {
		method, url, contentType string
		verb, resource           string
	}{
		{"GET", "/apis/apps/v1/namespaces/bench/deployments/web", "", "get", "deployments"},
		{"GET", "/apis/apps/v1/namespaces/bench/deployments", "", "list", "deployments"},
		{"GET", "/apis/apps/v1/deployments?labelSelector=tether.io%2Fwork-key&watch=true", "", "watch", "deployments"},
		{"GET", "/apis/apps/v1/deployments?watch=1", "", "watch", "deployments"},
		{"PATCH", "/apis/apps/v1/namespaces/bench/deployments/web?fieldManager=tether-agent", "application/apply-patch+yaml", "apply", "deployments"},
		{"PATCH", "/apis/apps/v1/namespaces/bench/deployments/web", "application/json-patch+json", "patch", "deployments"},
		{"PUT", "/apis/apps/v1/namespaces/bench/deployments/web/status", "", "update", "deployments/status"},
		{"POST", "/apis/apps/v1/namespaces/bench/deployments", "", "create", "deployments"},
		{"DELETE", "/apis/apps/v1/namespaces/bench/deployments/web", "", "delete", "deployments"},
		{"DELETE", "/apis/apps/v1/namespaces/bench/deployments", "", "deletecollection", "deployments"},
		{"GET", "/api/v1/namespaces/bench", "", "get", "namespaces"},
		{"GET", "/api/v1/namespaces", "", "list", "namespaces"},
		{"PUT", "/api/v1/namespaces/bench/finalize", "", "update", "namespaces/finalize"},
		{"GET", "/api/v1/namespaces/bench/status", "", "get", "namespaces/status"},
		{"GET", "/api/v1/namespaces/bench/pods", "", "list", "pods"},
		{"GET", "/api/v1/nodes", "", "list", "nodes"},
		{"GET", "/api", "", "get", "discovery"},
		{"GET", "/apis", "", "get", "discovery"},
		{"GET", "/apis/apps/v1", "", "get", "discovery"},
		{"GET", "/api/v1", "", "get", "discovery"},
		{"GET", "/readyz", "", "get", "/readyz"},
		{"GET", "/version", "", "get", "/version"},
		{"GET", "/", "", "get", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.url, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.url, nil)
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			verb, resource := kube.RequestKind(req)
			if verb != tt.verb || resource != tt.resource {
				t.Errorf("RequestKind(%s %s) = %s %s; want %s %s", tt.method, tt.url, verb, resource, tt.verb, tt.resource)
			}
		})
	}
}
