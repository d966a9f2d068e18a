package hubaddr

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitValidateHosts(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"h:1", []string{"h:1"}, ""},
		{" a:1 , [::1]:2 ", []string{"a:1", "[::1]:2"}, ""},
		{"", nil, "--hub: required"},
		{"a:1,", []string{"a:1", ""}, `entry 2 of 2, ""`},
		{"a:1,b", []string{"a:1", "b"}, `entry 2 of 2, "b": want host:port`},
		{"a:1,a:1", []string{"a:1", "a:1"}, "the same address as entry 1"},
		{":443", []string{":443"}, `":443": want host:port: no host`},
		{"h:https", []string{"h:https"}, "want a number from 1 to 65535"},
	} {
		got := Split(tc.in)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q; want %q", tc.in, got, tc.want)
		}
		err := Validate("--hub", got)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("Validate(%q) = %v; want nil", got, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Validate(%q) = %v; want an error containing %q", got, err, tc.wantErr)
		}
	}
	if got, want := Hosts([]string{"a:1", "[::1]:2"}), []string{"a", "::1"}; !slices.Equal(got, want) {
		t.Errorf("Hosts = %q; want %q", got, want)
	}
}
