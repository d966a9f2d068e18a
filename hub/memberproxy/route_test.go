package memberproxy

import "testing"

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
