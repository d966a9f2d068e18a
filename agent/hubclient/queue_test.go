package hubclient

import (
	"context"
	"testing"
	"time"

	"github.com/tetherproj/tether/agent/state"
)

func applyTask(key, version string) task { return task{work: state.Work{Key: key, Version: version}} }

// take returns the next ready task without waiting.
func takeNow(q *queue) (string, string, bool) {
	key, t, _, ok := q.take()
	return key, t.work.Version, ok
}

func TestQueueCoalescesPerKey(t *testing.T) {
	q := newQueue(time.Now)
	q.add("a", applyTask("a", "v1"))
	q.add("b", applyTask("b", "v1"))
	q.add("a", applyTask("a", "v2")) // replaces v1, keeps a's place
	for _, want := range []struct{ key, version string }{{"a", "v2"}, {"b", "v1"}} {
		key, version, ok := takeNow(q)
		if !ok || key != want.key || version != want.version {
			t.Errorf("take() = %s@%s, %t; want %s@%s", key, version, ok, want.key, want.version)
		}
	}
	if key, _, ok := takeNow(q); ok {
		t.Errorf("take() = %s; want nothing left", key)
	}
}

func TestQueueHandsAKeyToOneWorkerAtATime(t *testing.T) {
	q := newQueue(time.Now)
	q.add("a", applyTask("a", "v1"))
	if key, _, ok := takeNow(q); !ok || key != "a" {
		t.Fatalf("take() = %s, %t; want a", key, ok)
	}
	q.add("a", applyTask("a", "v2")) // while a is being worked on
	if key, _, ok := takeNow(q); ok {
		t.Fatalf("take() = %s while a is busy; want nothing", key)
	}
	q.done("a")
	if key, version, ok := takeNow(q); !ok || version != "v2" {
		t.Errorf("take() after done = %s@%s, %t; want a@v2", key, version, ok)
	}
}

func TestQueueRetryWaitsAndYieldsToNewerTasks(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := newQueue(func() time.Time { return now })
	q.retry("a", applyTask("a", "v1"), now.Add(time.Second))
	if _, _, wait, ok := q.take(); ok || wait != time.Second {
		t.Errorf("take() before the retry is due = %t, wait %s; want nothing, wait 1s", ok, wait)
	}
	now = now.Add(time.Second)
	if key, version, ok := takeNow(q); !ok || key != "a" || version != "v1" {
		t.Errorf("take() when due = %s@%s, %t; want a@v1", key, version, ok)
	}
	q.done("a")

	q.retry("b", applyTask("b", "v1"), now.Add(time.Hour))
	q.add("b", applyTask("b", "v2")) // a newer version does not wait
	if key, version, ok := takeNow(q); !ok || version != "v2" {
		t.Errorf("take() = %s@%s, %t; want b@v2 at once", key, version, ok)
	}
	q.retry("b", applyTask("b", "v1"), now) // an older retry while v2 is busy
	q.add("b", applyTask("b", "v3"))
	q.done("b")
	if key, version, ok := takeNow(q); !ok || version != "v3" {
		t.Errorf("take() = %s@%s, %t; want b@v3 (a retry never replaces a newer task)", key, version, ok)
	}
}

func TestQueueGetEndsWithContext(t *testing.T) {
	q := newQueue(time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, ok := q.get(ctx); ok {
		t.Error("get() on an ended context = ok; want false")
	}
}

func TestMerge(t *testing.T) {
	apply1, apply2 := applyTask("a", "v1"), applyTask("a", "v2")
	record := task{recordOnly: true, persist: true}
	del := task{deletion: &Deletion{Work: state.Work{Key: "a", Version: "v1"}}, persist: true}
	persisted := func(t task) task { t.persist = true; return t }
	tests := []struct {
		name          string
		waiting, next task
		want          task
	}{
		{"a newer apply replaces", apply1, apply2, apply2},
		{"a record write keeps the waiting apply, written first", apply1, record, persisted(apply1)},
		{"an apply after a record write writes the record", record, apply2, persisted(apply2)},
		{"a deletion replaces an apply", apply1, del, del},
		{"an apply after a deletion to write writes the record", del, apply2, persisted(apply2)},
		{"record after record", record, record, record},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := merge(tt.waiting, tt.next)
			if got.work.Version != tt.want.work.Version || got.persist != tt.want.persist ||
				got.recordOnly != tt.want.recordOnly || (got.deletion == nil) != (tt.want.deletion == nil) {
				t.Errorf("merge(%s) = %+v; want %+v", tt.name, got, tt.want)
			}
		})
	}
}

func TestRetryAfterARecordWriteKeepsTheAction(t *testing.T) {
	q := newQueue(time.Now)
	q.add("a", task{recordOnly: true, persist: true})
	q.retry("a", applyTask("a", "v1"), time.Now().Add(time.Hour))
	_, got, _, ok := q.take()
	if !ok || got.recordOnly || !got.persist || got.work.Version != "v1" {
		t.Errorf("take() = %+v, %t; want the apply of v1, its record written first", got, ok)
	}
}
