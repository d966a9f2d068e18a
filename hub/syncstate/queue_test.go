package syncstate

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// step is one queue operation: push key=value, or pop (key "").
type step struct {
	key, value string
}

func push(key, value string) step { return step{key: key, value: value} }

var pop = step{}

func TestQueue(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  []string // what each pop returned, then the remaining pops
	}{
		{
			name:  "empty",
			steps: nil,
			want:  nil,
		},
		{
			name:  "fifo by first push",
			steps: []step{push("a", "1"), push("b", "1"), push("c", "1")},
			want:  []string{"a=1", "b=1", "c=1"},
		},
		{
			name:  "newer version replaces queued one in place",
			steps: []step{push("a", "1"), push("b", "1"), push("a", "2"), push("a", "3")},
			want:  []string{"a=3", "b=1"},
		},
		{
			name:  "key pushed again after pop queues at the back",
			steps: []step{push("a", "1"), push("b", "1"), pop, push("a", "2")},
			want:  []string{"a=1", "b=1", "a=2"},
		},
		{
			name:  "pop on empty returns nothing",
			steps: []step{pop, push("a", "1")},
			want:  []string{"a=1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q Queue[string]
			var got []string
			for _, s := range tt.steps {
				if s.key != "" {
					q.Push(s.key, s.value)
					continue
				}
				if k, v, _, ok := q.Pop(); ok {
					got = append(got, k+"="+v)
				}
			}
			for k, v, _, ok := q.Pop(); ok; k, v, _, ok = q.Pop() {
				got = append(got, k+"="+v)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pops (-want +got):\n%s", diff)
			}
			if q.Len() != 0 {
				t.Errorf("Len after draining = %d; want 0", q.Len())
			}
		})
	}
}

func TestQueueCoalescesManyVersionsOfOneKey(t *testing.T) {
	var q Queue[int]
	for v := range 10000 {
		q.Push("hot", v)
		q.Push(fmt.Sprintf("cold-%d", v%3), v)
	}
	if q.Len() != 4 {
		t.Fatalf("Len = %d; want 4 (one entry per key)", q.Len())
	}
	k, v, _, _ := q.Pop()
	if k != "hot" || v != 9999 {
		t.Errorf("Pop = %s=%d; want hot=9999", k, v)
	}
}

func TestQueueSequenceAndCompaction(t *testing.T) {
	var q Queue[int]
	for i := range 1000 {
		q.Push(fmt.Sprint(i), i)
	}
	if q.Seq() != 1000 {
		t.Errorf("Seq = %d; want 1000", q.Seq())
	}
	for i := range 1000 {
		seq, _ := q.Peek()
		k, _, popped, ok := q.Pop()
		if !ok || k != fmt.Sprint(i) || popped != seq || seq != uint64(i+1) {
			t.Fatalf("Pop #%d = %s, seq %d (peek %d), %v; want %d, seq %d", i, k, popped, seq, ok, i, i+1)
		}
	}
	q.Push("again", 1) // a popped key is queued anew, with a new number
	if k, _, seq, _ := q.Pop(); k != "again" || seq != 1001 {
		t.Errorf("Pop after re-push = %s, seq %d; want again, seq 1001", k, seq)
	}
	if _, ok := q.Peek(); ok || len(q.order) > 2*compactMin+2 {
		t.Errorf("after draining: Peek ok = %v, len(order) = %d; want empty and compacted", ok, len(q.order))
	}
}

// TestEmptiedQueueKeepsNoRoom: a queue that held 1,000 keys and was
// emptied holds no map or slice with room for them (the hub's queue of
// each agent once a rollout is sent).
func TestEmptiedQueueKeepsNoRoom(t *testing.T) {
	var q Queue[int]
	for i := range 1000 {
		q.Push(fmt.Sprintf("k%04d", i), i)
	}
	for range 1000 {
		q.Pop()
	}
	if q.entries != nil || cap(q.order) != 0 {
		t.Errorf("emptied queue keeps a map of %d entries and room for %d keys; want none", len(q.entries), cap(q.order))
	}
	q.Push("after", 1)
	if key, v, _, ok := q.Pop(); key != "after" || v != 1 || !ok {
		t.Errorf("Pop after refilling = %q, %d, %v; want after, 1, true", key, v, ok)
	}
}
