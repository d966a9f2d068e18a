package placement

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUIDHashParity(t *testing.T) {
	// Parities from the spec (§4.9).
	tests := []struct {
		uid  string
		want bool
	}{
		{"", false},
		{"uid-a", true},
		{"uid-b", false},
		{"00000000-0000-0000-0000-000000000001", false},
		{"00000000-0000-0000-0000-000000000002", true},
	}
	for _, tt := range tests {
		if got := uidHashOdd(tt.uid); got != tt.want {
			t.Errorf("uidHashOdd(%q) = %v; want %v", tt.uid, got, tt.want)
		}
	}
}

func TestWebster(t *testing.T) {
	tests := []struct {
		name  string
		seats int32
		votes map[string]int64
		uid   string
		want  map[string]int32
	}{
		{"equal weights, empty uid: ascending names win ties", 10,
			map[string]int64{"m1": 1, "m2": 1, "m3": 1}, "", map[string]int32{"m1": 4, "m2": 3, "m3": 3}},
		{"equal weights, odd uid: descending names win ties", 10,
			map[string]int64{"m1": 1, "m2": 1, "m3": 1}, "uid-a", map[string]int32{"m1": 3, "m2": 3, "m3": 4}},
		{"1:2:3", 10, map[string]int64{"a": 1, "b": 2, "c": 3}, "", map[string]int32{"a": 2, "b": 3, "c": 5}},
		{"7:2:1 is not largest remainder", 5,
			map[string]int64{"a": 7, "b": 2, "c": 1}, "", map[string]int32{"a": 3, "b": 1, "c": 1}},
		{"fewer seats than parties", 2,
			map[string]int64{"a": 1, "b": 1, "c": 1, "d": 1}, "uid-b", map[string]int32{"a": 1, "b": 1, "c": 0, "d": 0}},
		{"fewer seats than parties, odd uid", 2,
			map[string]int64{"a": 1, "b": 1, "c": 1, "d": 1}, "uid-a", map[string]int32{"a": 0, "b": 0, "c": 1, "d": 1}},
		{"zero votes get nothing", 3, map[string]int64{"a": 0, "b": 5}, "", map[string]int32{"a": 0, "b": 3}},
		{"no seats", 0, map[string]int64{"a": 1}, "", map[string]int32{"a": 0}},
		{"6:12:18 of 12", 12, map[string]int64{"A": 6, "B": 12, "C": 18}, "", map[string]int32{"A": 2, "B": 4, "C": 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var parties []party
			for n, v := range tt.votes {
				parties = append(parties, party{name: n, votes: v})
			}
			got := map[string]int32{}
			prev := ""
			for _, p := range webster(tt.seats, parties, tt.uid) {
				if p.name < prev {
					t.Errorf("webster result not sorted by name: %s after %s", p.name, prev)
				}
				prev = p.name
				got[p.name] = p.seats
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("webster(%d, %v, %q) mismatch (-want +got):\n%s", tt.seats, tt.votes, tt.uid, diff)
			}
		})
	}
}

func TestWebsterEmpty(t *testing.T) {
	if got := webster(3, nil, ""); got != nil {
		t.Errorf("webster(3, nil) = %v; want nil", got)
	}
}
