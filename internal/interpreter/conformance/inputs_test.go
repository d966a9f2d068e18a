package conformance

import "testing"

// TestDecodeStatusItems: only null gives nil; an empty list stays an empty
// list; anything but a list is an error.
func TestDecodeStatusItems(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		wantNil  bool
		wantLen  int
		wantErr  bool
	}{
		{"null", "null", true, 0, false},
		{"empty document", "", true, 0, false},
		{"empty list", "[]", false, 0, false},
		{"two items", "- clusterName: m1\n- clusterName: m2\n", false, 2, false},
		{"not a list", "clusterName: m1\n", true, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeStatusItems([]byte(tc.in))
			if (err != nil) != tc.wantErr || (got == nil) != tc.wantNil || len(got) != tc.wantLen {
				t.Errorf("DecodeStatusItems(%q) = %v (nil %v), %v; want nil %v, %d items, error %v", tc.in, got, got == nil, err, tc.wantNil, tc.wantLen, tc.wantErr)
			}
		})
	}
}
