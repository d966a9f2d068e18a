package hub

import (
	"testing"
	"time"
)

func TestStoreStateHandsOverOnlyAfterTheGrace(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var s storeState
	s.reset(t0)
	steps := []struct {
		ok    bool
		after time.Duration
		want  transition
	}{
		{true, time.Second, storeSame},
		{false, 2 * time.Second, storeSame},                                 // a failed read alone moves nobody
		{false, time.Second + storeLossGrace - time.Millisecond, storeSame}, // just under the grace since the last success
		{false, time.Second + storeLossGrace, storeLost},                    // the grace is over: hand the agents over, once
		{false, 2 * storeLossGrace, storeSame},
		{true, 2*storeLossGrace + time.Second, storeFound}, // back: serve again, once
		{true, 2*storeLossGrace + 2*time.Second, storeSame},
		{false, 3 * storeLossGrace, storeSame}, // a new grace from the last success
	}
	for i, st := range steps {
		if got := s.observe(st.ok, t0.Add(st.after)); got != st.want {
			t.Errorf("step %d (ok %v at +%s) = %d; want %d", i, st.ok, st.after, got, st.want)
		}
	}
}
