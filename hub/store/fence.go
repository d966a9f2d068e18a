package store

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Fence makes a view's writes conditional on a leadership: while held, on
// the key the holder created when it was elected (hub/leader) still having
// the create revision it had then; while released, no write is sent at all.
// A deposed leader's key is gone (its session expired or it resigned) or
// belongs to the next leader (another create revision), so etcd refuses its
// writes even before the holder notices; they fail with ErrNotLeader.
//
// An open Fence (Open) lets every write through unconditionally: its
// holder is the only replica there can be, with no one to fence against.
//
// A new Fence is released. Its methods are safe for concurrent use.
type Fence struct {
	mu   sync.RWMutex // guards the fields below
	key  string       // the leadership key; empty: released, or open
	rev  int64        // its create revision
	open bool         // Open: no condition at all
}

// Hold fences writes on key having been created at rev.
func (f *Fence) Hold(key string, rev int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.key, f.rev, f.open = key, rev, false
}

// Open lets every write through, with no condition, until Release: the
// holder is the only replica there can be (hub/leader's Config.Alone).
func (f *Fence) Open() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.key, f.rev, f.open = "", 0, true
}

// Release makes every write fail with ErrNotLeader until the next Hold or
// Open.
func (f *Fence) Release() { f.Hold("", 0) }

// cmp returns the compare that guards a write and the key and revision it
// compares (key empty: none, the fence is open), and ok false when
// released.
func (f *Fence) cmp() (c clientv3.Cmp, key string, rev int64, ok bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.open {
		return clientv3.Cmp{}, "", 0, true
	}
	if f.key == "" {
		return clientv3.Cmp{}, "", 0, false
	}
	return clientv3.Compare(clientv3.CreateRevision(f.key), "=", f.rev), f.key, f.rev, true
}

// Fenced returns a view of s whose writes (Put, Create, Update, Delete) go
// through only while f is held and its key is still the one it holds
// (ErrNotLeader otherwise). Reads and watches are s's. The view shares s's
// connection: closing it does nothing, closing s ends both.
func (s *Store) Fenced(f *Fence) *Store {
	return &Store{client: s.client, log: s.log, fence: f, view: true, counts: s.counts}
}

// write commits "if every cmp holds then do then, else get key" with the
// fence's compare added when s is fenced. It returns ErrNotLeader when the
// fence is released or its compare failed; otherwise resp.Succeeded says
// whether cmps held, and resp.Responses[0] is the else's get.
func (s *Store) write(ctx context.Context, op, key string, cmps []clientv3.Cmp, then clientv3.Op) (*clientv3.TxnResponse, error) {
	elses := []clientv3.Op{clientv3.OpGet(key)}
	var fkey string
	var frev int64
	if s.fence != nil {
		fcmp, k, rev, ok := s.fence.cmp()
		if !ok {
			return nil, wrap(op, key, ErrNotLeader)
		}
		if k != "" {
			cmps = append(cmps, fcmp)
			elses = append(elses, clientv3.OpGet(k))
			fkey, frev = k, rev
		}
	}
	s.counts.writes.Add(1)
	resp, err := s.client.Txn(ctx).If(cmps...).Then(then).Else(elses...).Commit()
	if err != nil {
		return nil, wrap(op, key, err)
	}
	if !resp.Succeeded && fkey != "" {
		kvs := resp.Responses[1].GetResponseRange().Kvs
		if len(kvs) == 0 || kvs[0].CreateRevision != frev {
			return nil, wrap(op, key, ErrNotLeader)
		}
	}
	return resp, nil
}
