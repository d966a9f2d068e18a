package ctl

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(""), &o, &e)
	return code, o.String(), e.String()
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := run(t, args...)
		if code != 0 || !strings.HasPrefix(out, "tetherctl v") {
			t.Errorf("tetherctl %v = %d, %q; want 0 and the version line", args, code, out)
		}
	}
}

func TestUnknownCommandExitsNonZero(t *testing.T) {
	code, _, errOut := run(t, "frobnicate")
	if code == 0 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("tetherctl frobnicate = %d, stderr %q; want non-zero and an unknown command error", code, errOut)
	}
}
