package hubclient

import (
	"testing"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// TestDigestPacer: while reports keep coming the digests are written once
// every max ticks, not at every tick; the first quiet tick writes them.
func TestDigestPacer(t *testing.T) {
	p := digestPacer{max: 4}
	var changes uint64
	var writes []int
	for tick := 1; tick <= 10; tick++ { // a report between every two ticks
		changes++
		if p.due(changes) {
			writes = append(writes, tick)
		}
	}
	if len(writes) != 2 || writes[0] != 4 || writes[1] != 8 {
		t.Errorf("during a burst of 10 ticks, digests written at ticks %v; want 4 and 8", writes)
	}
	if !p.due(changes) {
		t.Error("the first tick without a new report did not write the digests")
	}
	changes++
	if p.due(changes) {
		t.Error("a tick right after a report, with the burst over, wrote the digests; want the next quiet tick")
	}
	if !p.due(changes) {
		t.Error("the quiet tick after the report did not write the digests")
	}
}

// TestDigestChangesCount: every change of a digest counts, a report that
// repeats the digest held does not.
func TestDigestChangesCount(t *testing.T) {
	b := NewBooks(snapshot(hubA))
	r := &agentv1.StatusReport{WorkKey: "a", Version: "v1", Digest: "d1"}
	b.Reported(r)
	b.Reported(r)
	if got := b.DigestChanges(); got != 1 {
		t.Errorf("DigestChanges() after one digest reported twice = %d; want 1", got)
	}
	b.Reported(&agentv1.StatusReport{WorkKey: "a", Version: "v1", Digest: "d2"})
	if got := b.DigestChanges(); got != 2 {
		t.Errorf("DigestChanges() after a new digest = %d; want 2", got)
	}
}
