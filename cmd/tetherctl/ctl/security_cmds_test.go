package ctl_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherproj/tether/cmd/tetherctl/ctl"
)

// TestSecurityCommandsRefuseBadFlags: token, user and cluster commands
// check their flags before they reach for a hub.
func TestSecurityCommandsRefuseBadFlags(t *testing.T) {
	noConfig := filepath.Join(t.TempDir(), "none.conf")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"token create -o yaml", []string{"token", "create", "-o", "yaml"}, "unknown output format"},
		{"token create negative uses", []string{"token", "create", "--uses", "-1"}, "must not be negative"},
		{"token list -o wide", []string{"token", "list", "-o", "wide"}, "unknown output format"},
		{"token delete without id", []string{"token", "delete"}, "accepts 1 arg"},
		{"user create without role", []string{"user", "create", "bob", "-o", "x"}, "--role"},
		{"user create bad role", []string{"user", "create", "bob", "--role", "root", "-o", "x"}, "--role"},
		{"user create without -o", []string{"user", "create", "bob", "--role", "viewer"}, "-o FILE"},
		{"cluster remove without name", []string{"cluster", "remove"}, "accepts 1 arg"},
		{"cluster approve without config", []string{"--config", noConfig, "cluster", "approve", "edge-1", "--key-fingerprint", "sha256:" + strings.Repeat("ab", 32)}, "no config"},
		{"cluster approve without fingerprint", []string{"--config", noConfig, "cluster", "approve", "edge-1"}, "--key-fingerprint: required"},
		{"cluster reject bad fingerprint", []string{"--config", noConfig, "cluster", "reject", "edge-1", "--key-fingerprint", "abc"}, "want sha256:<64 lowercase hex digits>"},
		{"user revoke without name", []string{"user", "revoke"}, "accepts 1 arg"},
		{"token create without config", []string{"--config", noConfig, "token", "create"}, "no config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := ctl.Run(context.Background(), tt.args, strings.NewReader(""), &out, &errOut)
			if code == 0 || !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("tetherctl %v = %d, %q; want non-zero and %q", tt.args, code, errOut.String(), tt.want)
			}
		})
	}
}
