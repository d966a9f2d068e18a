package runtest

import (
	"context"
	"errors"
	"testing"
)

// recorder is a testing.TB that records errors and cleanups.
type recorder struct {
	testing.TB
	errors   int
	cleanups []func()
}

func (r *recorder) Errorf(string, ...any) { r.errors++ }
func (r *recorder) Cleanup(f func())      { r.cleanups = append(r.cleanups, f) }

func TestGoStopsAndWaits(t *testing.T) {
	for _, tc := range []struct {
		name       string
		result     error
		wantErrors int
	}{
		{"nil after cancel", nil, 0},
		{"error after cancel", errors.New("boom"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			returned := false
			stop := Go(r, context.Background(), "loop", func(ctx context.Context) error {
				<-ctx.Done()
				returned = true
				return tc.result
			})
			stop()
			if !returned {
				t.Fatal("stop returned before Run did")
			}
			for _, f := range r.cleanups {
				f() // a second stop does nothing
			}
			if r.errors != tc.wantErrors {
				t.Errorf("Go reported %d errors; want %d", r.errors, tc.wantErrors)
			}
		})
	}
}
