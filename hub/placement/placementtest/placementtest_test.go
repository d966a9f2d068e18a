package placementtest

import "testing"

func TestKarmadaMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0/2 clusters are available: 2 cluster(s) did not match the placement cluster affinity constraint (m1, m2).",
			"0/2 clusters are available: 2 cluster(s) did not match the placement cluster affinity constraint."},
		{"0/1 clusters are available: 1 cluster(s) had untolerated taint {k:NoSchedule} (a(b)c).",
			"0/1 clusters are available: 1 cluster(s) had untolerated taint {k:NoSchedule}."},
		{"no names here", "no names here"},
	} {
		if got := KarmadaMessage(tc.in); got != tc.want {
			t.Errorf("KarmadaMessage(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
