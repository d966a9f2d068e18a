package memberproxy

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hashicorp/go-hclog"
	"k8s.io/client-go/rest"
)

func TestCheckIdentity(t *testing.T) {
	tests := []struct {
		name string
		hdr  http.Header
		ok   bool
	}{
		{"hub user and groups", http.Header{"Impersonate-User": {"tether:alice"}, "Impersonate-Group": {"tether:users", "tether:role:admin"}}, true},
		{"no user", http.Header{"Impersonate-Group": {"tether:users"}}, false},
		{"two users", http.Header{"Impersonate-User": {"tether:a", "tether:b"}}, false},
		{"bare prefix", http.Header{"Impersonate-User": {"tether:"}}, false},
		{"member user", http.Header{"Impersonate-User": {"system:admin"}}, false},
		{"member group", http.Header{"Impersonate-User": {"tether:alice"}, "Impersonate-Group": {"system:masters"}}, false},
		{"extra", http.Header{"Impersonate-User": {"tether:alice"}, "Impersonate-Extra-Scopes": {"x"}}, false},
		{"uid", http.Header{"Impersonate-User": {"tether:alice"}, "Impersonate-Uid": {"1"}}, false},
		{"credentials", http.Header{"Impersonate-User": {"tether:alice"}, "Authorization": {"Bearer x"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkIdentity(tt.hdr)
			if (err == nil) != tt.ok {
				t.Errorf("checkIdentity(%v) = %v; want ok %v", tt.hdr, err, tt.ok)
			}
		})
	}
}

// TestReadOnlyMode: in read-only mode the agent refuses exec (also as a
// WebSocket GET) and writes with 403 before reaching the member; reads
// go on to the member (here an address where nothing listens: 502).
func TestReadOnlyMode(t *testing.T) {
	h, err := NewHandler(&rest.Config{Host: "https://127.0.0.1:1"}, ReadOnly, 0, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path string
		code         int
	}{
		{"GET", "/api/v1/namespaces/dev/pods", http.StatusBadGateway},
		{"GET", "/api/v1/namespaces/dev/pods/web/log?follow=true", http.StatusBadGateway},
		{"GET", "/api/v1/namespaces/dev/pods/web/exec?command=sh", http.StatusForbidden},
		{"POST", "/api/v1/namespaces/dev/pods/web/portforward", http.StatusForbidden},
		{"DELETE", "/api/v1/namespaces/dev/pods/web", http.StatusForbidden},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.path, nil)
		r.Header.Set("Impersonate-User", "tether:alice")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.code {
			t.Errorf("read-only %s %s = %d %s; want %d", tt.method, tt.path, w.Code, w.Body, tt.code)
		}
	}
	if n := len(h.sessions); n != 0 {
		t.Errorf("%d session slots held after the requests; want 0", n)
	}
}
