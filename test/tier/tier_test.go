package tier_test

import (
	"testing"

	"github.com/tetherproj/tether/test/tier"
)

// TestLong: a long test is skipped unless TETHER_TESTS=long, and runs
// to its end when it is.
func TestLong(t *testing.T) {
	for _, tc := range []struct {
		env     string
		wantRun bool
	}{
		{env: "", wantRun: false},
		{env: "full", wantRun: false},
		{env: "long", wantRun: true},
	} {
		var sub *testing.T
		ran := false
		t.Run("env="+tc.env, func(t *testing.T) {
			sub = t
			t.Setenv(tier.Env, tc.env)
			tier.Long(t, "waits")
			ran = true
		})
		if ran != tc.wantRun || sub.Skipped() == tc.wantRun {
			t.Errorf("Long with %s=%q: ran %v, skipped %v; want ran %v", tier.Env, tc.env, ran, sub.Skipped(), tc.wantRun)
		}
	}
}
