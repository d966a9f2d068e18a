package view

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// Records follows the objects under one held prefix of a view as values
// of type T by name (the key without the prefix): the one follower of the
// small record sets every replica holds whole and answers from (the
// revoked users, the users' roles). Its methods are safe for concurrent
// use.
type Records[T any] struct {
	v      *View
	prefix string
	// unreadable is the value held for a record whose stored bytes do not
	// decode: its owner's fail-closed answer.
	unreadable func(name string, err error) T
	log        hclog.Logger

	mu sync.Mutex // guards the fields below
	// byName holds every record, once loaded is set.
	byName map[string]T
	loaded bool
	// changed is closed, and replaced, whenever byName changes.
	changed chan struct{}
}

// NewRecords returns the follower of prefix (held by v, decoded into T);
// unreadable gives the value held for a record that does not decode. Run
// loads and follows it.
func NewRecords[T any](v *View, prefix string, unreadable func(name string, err error) T, logger hclog.Logger) *Records[T] {
	return &Records[T]{v: v, prefix: prefix, unreadable: unreadable, log: logger,
		byName: map[string]T{}, changed: make(chan struct{})}
}

// Run follows the prefix in the view until ctx ends, then returns nil. A
// full batch (the view's first list, or a new list after a store
// failure) replaces every record.
func (r *Records[T]) Run(ctx context.Context) error {
	return r.v.Each(ctx, r.apply, r.prefix)
}

// apply applies one batch of the view.
func (r *Records[T]) apply(b Batch) {
	if !b.Full && len(b.Changes) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if b.Full {
		r.byName, r.loaded = make(map[string]T, len(b.Changes)), true
	}
	for _, c := range b.Changes {
		name := strings.TrimPrefix(c.Key, r.prefix)
		if c.Object == nil {
			delete(r.byName, name)
			continue
		}
		r.byName[name] = r.valueOf(name, c.Object)
	}
	r.notifyLocked()
}

// valueOf is the value held for o: its decoded value, or the unreadable
// one when its stored bytes did not decode.
func (r *Records[T]) valueOf(name string, o *Object) T {
	err := o.Err
	val, ok := o.Value.(T)
	if err == nil && !ok {
		err = fmt.Errorf("view: %s holds %T", o.Key, o.Value)
	}
	if err != nil {
		r.log.Warn("record unreadable; held as its owner's fail-closed value", "key", o.Key, "error", err)
		return r.unreadable(name, err)
	}
	return val
}

// Get returns name's record and whether it is held; loaded says whether
// Run has listed once (before, nothing is held: ask the store).
func (r *Records[T]) Get(name string) (val T, ok, loaded bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	val, ok = r.byName[name]
	return val, ok, r.loaded
}

// Set holds val as name's record at once: a write this replica made,
// which the view brings back later.
func (r *Records[T]) Set(name string, val T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byName[name] = val
	r.notifyLocked()
}

// Load replaces every record with all and marks the records loaded, as a
// full batch does.
func (r *Records[T]) Load(all map[string]T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byName, r.loaded = all, true
	r.notifyLocked()
}

func (r *Records[T]) notifyLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Changed returns a channel closed at the next change of the records.
func (r *Records[T]) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}
