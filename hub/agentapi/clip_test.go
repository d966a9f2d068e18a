package agentapi

import (
	"strings"
	"testing"
)

func TestClipBoundsLoggedStrings(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"short stays", "ric default/web: lua: syntax error", "ric default/web: lua: syntax error"},
		{"at the bound stays", strings.Repeat("a", maxLoggedBytes), strings.Repeat("a", maxLoggedBytes)},
		{"long is cut, saying its size", strings.Repeat("a", 4<<20), strings.Repeat("a", maxLoggedBytes) + "... (4194304 bytes)"},
		{"a cut rune is dropped", strings.Repeat("a", maxLoggedBytes-1) + "é" + "b", strings.Repeat("a", maxLoggedBytes-1) + "... (1026 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clip(tt.in); got != tt.want {
				t.Errorf("clip(%d bytes) = %.40q... (%d bytes); want %d bytes", len(tt.in), got, len(got), len(tt.want))
			}
		})
	}
}
