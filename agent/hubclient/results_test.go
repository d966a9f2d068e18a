package hubclient

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

const (
	applied = agentv1.ApplyResult_APPLY_RESULT_APPLIED
	failed  = agentv1.ApplyResult_APPLY_RESULT_FAILED
)

func result(key, version string, r agentv1.ApplyResult) event {
	return event{"result " + key, func(b *Books) (Effects, error) {
		return Effects{Send: b.Result(&agentv1.Ack{WorkKey: key, Version: version, Result: r})}, nil
	}, nil}
}

func (e event) wants(want ...string) event { e.want = want; return e }

func TestBooksAcks(t *testing.T) {
	tests := []struct {
		name   string
		events []event
	}{
		{
			name: "no stream: kept and sent after the next SyncDone",
			events: []event{result("a", "v1", applied), hello(), welcome(hubA),
				syncDone(1).wants("ack a@v1 APPLY_RESULT_APPLIED")},
		},
		{
			name: "stream up: sent at once",
			events: []event{hello(), welcome(hubA),
				result("a", "v1", applied).wants("ack a@v1 APPLY_RESULT_APPLIED")},
		},
		{
			name: "the same result again is not news",
			events: []event{hello(), welcome(hubA), result("a", "v1", failed).wants("ack a@v1 APPLY_RESULT_FAILED"),
				result("a", "v1", failed), result("a", "v1", applied).wants("ack a@v1 APPLY_RESULT_APPLIED")},
		},
		{
			name:   "a result of a version no longer held is dropped",
			events: []event{hello(), welcome(hubA), result("a", "v0", applied)},
		},
		{
			name: "not to another hub",
			events: []event{hello(), welcome(hubB), result("a", "v1", applied),
				syncKeys(nil)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBooks(snapshot(hubA, held("a", "v1", hubA)))
			for i, ev := range tt.events {
				e, err := ev.do(b)
				if err != nil {
					t.Fatalf("step %d (%s): %v", i, ev.name, err)
				}
				if diff := cmp.Diff(ev.want, summarize(e)); diff != "" {
					t.Errorf("step %d (%s): effects mismatch (-want +got):\n%s", i, ev.name, diff)
				}
			}
		})
	}
}

func TestBooksDeliveredAcksAreNotResent(t *testing.T) {
	b := NewBooks(snapshot(hubA, held("a", "v1", hubA)))
	b.Hello("v1")
	if _, err := b.Welcome(&agentv1.Welcome{HubIdentity: hubA}, t0); err != nil {
		t.Fatal(err)
	}
	for _, m := range b.Result(&agentv1.Ack{WorkKey: "a", Version: "v1", Result: applied}) {
		b.Delivered(m)
	}
	b.EndStream()
	b.Hello("v1")
	if _, err := b.Welcome(&agentv1.Welcome{HubIdentity: hubA}, t0); err != nil {
		t.Fatal(err)
	}
	e, err := b.SyncDone(&agentv1.SyncDone{WorkCount: 1}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := summarize(e); len(got) != 0 {
		t.Errorf("SyncDone after a delivered ack = %v; want nothing sent again", got)
	}
}

func TestBooksReports(t *testing.T) {
	b := NewBooks(snapshot(hubA, held("a", "v1", hubA), held("o", "v1", hubB)))
	r := &agentv1.StatusReport{WorkKey: "a", Version: "v1", Digest: "d1"}
	if b.Report(r) {
		t.Errorf("Report(%v) without a stream = true; want false", r)
	}
	b.Hello("v1")
	if _, err := b.Welcome(&agentv1.Welcome{HubIdentity: hubA}, t0); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		r    *agentv1.StatusReport
		want bool
	}{
		{r, true},
		{&agentv1.StatusReport{WorkKey: "a", Version: "v0"}, false},
		{&agentv1.StatusReport{WorkKey: "o", Version: "v1"}, false},
		{&agentv1.StatusReport{WorkKey: "x", Version: "v1"}, false},
	} {
		if got := b.Report(tt.r); got != tt.want {
			t.Errorf("Report(%v) = %t; want %t", tt.r, got, tt.want)
		}
	}
	b.Reported(r)
	if got := b.TakeDigests(); got["a"].Digest != "d1" {
		t.Errorf("TakeDigests() = %v; want a's digest d1", got)
	}
	if got := b.TakeDigests(); got != nil {
		t.Errorf("TakeDigests() again = %v; want nil (nothing changed)", got)
	}
	if h := b.Hello("v1"); len(h.GetReportedStatuses()) != 1 {
		t.Errorf("Hello().ReportedStatuses = %v; want a's digest", h.GetReportedStatuses())
	}
}
