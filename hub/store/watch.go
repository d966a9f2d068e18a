package store

import (
	"context"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// EventType says what happened to a key.
type EventType int

// Event types.
const (
	EventPut EventType = iota + 1
	EventDelete
)

// Event is one change under a watched prefix, or the error that ended the
// watch (Err set, the channel closes after it).
type Event struct {
	Type EventType
	// KV holds the new value; for a delete, the key and the revision of the
	// deletion, and the value before it (unless the watch was opened with
	// DeletesWithoutValue).
	KV  KV
	Err error
}

// Watch streams the changes under prefix from revision fromRev (0: from
// now) until ctx ends. If fromRev was compacted the only event carries
// ErrCompacted: the caller lists again and watches from the list revision.
func (s *Store) Watch(ctx context.Context, prefix string, fromRev int64, opts ...WatchOption) <-chan Event {
	return s.WatchRange(ctx, prefix, PrefixEnd(prefix), fromRev, opts...)
}

// WatchOption changes what a watch delivers.
type WatchOption int

// DeletesWithoutValue makes a watch's delete events carry the key and the
// revision of the deletion only, not the value before it. etcd then sends
// each put once instead of with the value it replaced: for a watcher that
// keeps what it needs of the deleted values itself, half the bytes (a
// binding of 1,000 clusters, rewritten as its statuses change, is some
// 150 KiB).
const DeletesWithoutValue WatchOption = 1

// WatchRange is Watch of the keys in [start, end): one watch whose events
// come in revision order across the whole range.
func (s *Store) WatchRange(ctx context.Context, start, end string, fromRev int64, with ...WatchOption) <-chan Event {
	opts := []clientv3.OpOption{clientv3.WithRange(end)}
	if !slices.Contains(with, DeletesWithoutValue) {
		opts = append(opts, clientv3.WithPrevKV())
	}
	if fromRev > 0 {
		opts = append(opts, clientv3.WithRev(fromRev))
	}
	wch := s.client.Watch(clientv3.WithRequireLeader(ctx), start, opts...)
	out := make(chan Event)
	go func() {
		defer close(out)
		for resp := range wch {
			if err := resp.Err(); err != nil {
				send(ctx, out, Event{Err: wrap("watch", start, err)})
				return
			}
			for _, ev := range resp.Events {
				s.counts.seen.Raise(ev.Kv.ModRevision) // before the caller can act on it
				if !send(ctx, out, toEvent(ev)) {
					return
				}
			}
		}
	}()
	return out
}

func toEvent(ev *clientv3.Event) Event {
	kv := kvOf(ev.Kv)
	if ev.Type == clientv3.EventTypeDelete {
		if ev.PrevKv != nil {
			kv.Value, kv.CreateRevision = ev.PrevKv.Value, ev.PrevKv.CreateRevision
		}
		return Event{Type: EventDelete, KV: kv}
	}
	return Event{Type: EventPut, KV: kv}
}

func send(ctx context.Context, out chan<- Event, ev Event) bool {
	select {
	case out <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}
