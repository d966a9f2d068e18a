package placement

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tetherproj/tether/hub/placement/placementtest"
)

// TestScheduleConformance runs every "must" schedule case: Tether places
// exactly as Karmada v1.18.2 does. may-differ cases have their own tests
// in differ_test.go.
func TestScheduleConformance(t *testing.T) {
	ran := 0
	for _, c := range loadCases(t) {
		if c.Conformance != "must" {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			res, err := Schedule(c.input(t))
			checkCase(t, &c, res, err)
		})
	}
	t.Logf("schedule conformance must: %d cases", ran)
}

// checkCase compares a result with a case's expectation: clusters as a
// set with replicas; errors by type, message and rejected clusters.
func checkCase(t *testing.T, c *schedCase, res Result, err error) {
	t.Helper()
	if c.Expected.ErrorType == "" {
		if err != nil {
			t.Fatalf("Schedule(%s) error = %v; want none", c.Name, err)
		}
		if diff := cmp.Diff(c.expectedTargets(), sortedTargets(res.Clusters)); diff != "" {
			t.Errorf("Schedule(%s) clusters mismatch (-want +got):\n%s", c.Name, diff)
		}
		return
	}
	if err == nil {
		t.Fatalf("Schedule(%s) = %v; want %s %q", c.Name, res.Clusters, c.Expected.ErrorType, c.Expected.Error)
	}
	if got := ErrorType(err); got != c.Expected.ErrorType {
		t.Errorf("Schedule(%s) error type = %s (%v); want %s", c.Name, got, err, c.Expected.ErrorType)
	}
	if got := placementtest.KarmadaMessage(err.Error()); got != c.Expected.Error {
		t.Errorf("Schedule(%s) error = %q; want %q", c.Name, got, c.Expected.Error)
	}
	if c.Expected.ErrorType == "FitError" {
		for _, name := range c.rejectedByKarmada() {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("Schedule(%s) error %q does not name rejected cluster %s", c.Name, err, name)
			}
		}
	}
}

// TestScheduleLeavesInputAlone checks purity on every case: Schedule
// never writes into its input, and the same input gives the same result.
func TestScheduleLeavesInputAlone(t *testing.T) {
	for _, c := range loadCases(t) {
		in, pristine := c.input(t), c.input(t)
		first, err1 := Schedule(in)
		if !reflect.DeepEqual(in, pristine) {
			t.Errorf("Schedule(%s) modified its input", c.Name)
		}
		second, err2 := Schedule(in)
		if !reflect.DeepEqual(first, second) || fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Errorf("Schedule(%s) is not deterministic: %v, %v then %v, %v", c.Name, first, err1, second, err2)
		}
	}
}
