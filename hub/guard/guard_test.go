package guard

import (
	"errors"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestDoSkipsPanickingKey runs a loop over three keys whose second
// panics: the other two still run, the panic comes back as an error
// naming the key, and it is counted.
func TestDoSkipsPanickingKey(t *testing.T) {
	counts := NewCounts()
	var done []string
	errs := map[string]error{}
	for _, key := range []string{"a", "bad", "c"} {
		errs[key] = Do(hclog.NewNullLogger(), counts, "test", key, func() error {
			if key == "bad" {
				var m map[string]int
				m[key]++ // nil map write: a runtime panic
			}
			done = append(done, key)
			return nil
		})
	}
	if len(done) != 2 || done[0] != "a" || done[1] != "c" {
		t.Errorf("keys done = %v; want [a c]", done)
	}
	if !errors.Is(errs["bad"], ErrPanicked) {
		t.Errorf("Do(bad) = %v; want ErrPanicked", errs["bad"])
	}
	if errs["a"] != nil || errs["c"] != nil {
		t.Errorf("Do(a), Do(c) = %v, %v; want nil", errs["a"], errs["c"])
	}
	if got := counts.Get("test", KindPanic); got != 1 {
		t.Errorf("panics counted = %d; want 1", got)
	}
}

func TestDoReturnsError(t *testing.T) {
	want := errors.New("boom")
	if got := Do(hclog.NewNullLogger(), nil, "test", "k", func() error { return want }); got != want {
		t.Errorf("Do = %v; want %v", got, want)
	}
}
