package version

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v1.2.3"
	if got := String("tetherctl"); !strings.HasPrefix(got, "tetherctl v1.2.3 (commit ") {
		t.Errorf("String(tetherctl) = %q; want prefix %q", got, "tetherctl v1.2.3 (commit ")
	}
}
