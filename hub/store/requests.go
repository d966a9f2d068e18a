package store

import (
	"context"
	"fmt"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// maxTxnOps is how many compares (Unchanged) or reads (GetAll,
// GetLocalAll) one transaction carries: etcd's default --max-txn-ops.
const maxTxnOps = 128

// Requests counts the store's requests to etcd by the rounds they cost:
// a quorum read (Get, List, Count, Unchanged) waits for etcd's read index
// (a raft round, behind every write the member is persisting); a local
// read (GetLocalAll, ListLocal) is answered by the member the client is connected to;
// a write is a raft proposal, committed once its log is fsynced.
type Requests struct {
	QuorumReads, LocalReads, Writes int64
}

// counters are a Store's Requests and Seen, shared by its fenced views.
type counters struct {
	quorumReads, localReads, writes atomic.Int64
	seen                            Watermark // Seen
}

// Seen returns the highest store revision that s and its views have
// handed to a caller so far, by List or by a Watch's events: whatever a
// component decided from what it read, it read at a revision no higher
// than Seen returns afterwards.
func (s *Store) Seen() int64 { return s.counts.seen.Load() }

// Requests returns how many requests s and its views have made so far.
func (s *Store) Requests() Requests {
	c := s.counts
	return Requests{QuorumReads: c.quorumReads.Load(), LocalReads: c.localReads.Load(), Writes: c.writes.Load()}
}

// Unchanged reports whether every key of revs is still at its revision
// (0: still absent), with quorum reads: one transaction of compares per
// maxTxnOps keys, each true at some instant during the call.
func (s *Store) Unchanged(ctx context.Context, revs map[string]int64) (bool, error) {
	var cmps []clientv3.Cmp
	for key, rev := range revs {
		if rev == 0 {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(key), "=", 0))
		} else {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(key), "=", rev))
		}
	}
	for len(cmps) > 0 {
		n := min(len(cmps), maxTxnOps)
		s.counts.quorumReads.Add(1)
		resp, err := s.client.Txn(ctx).If(cmps[:n]...).Commit()
		if err != nil {
			return false, wrap("compare", "", err)
		}
		if !resp.Succeeded {
			return false, nil
		}
		cmps = cmps[n:]
	}
	return true, nil
}

// GetLocalAll returns the values at keys (absent keys are absent from the
// map) as the etcd member the client is connected to has applied them
// (serializable reads, one transaction per 128 keys): no raft round, so
// it does not wait behind the writes being persisted, but it may miss
// writes not yet applied on that member. Use it only for a decision that
// a conditional write (Create, Update, Delete with a revision) or
// Unchanged checks afterwards.
func (s *Store) GetLocalAll(ctx context.Context, keys []string) (map[string]KV, error) {
	return s.getAll(ctx, keys, &s.counts.localReads, clientv3.WithSerializable())
}

// GetAll returns the values at keys (absent keys are absent from the map)
// in one quorum read per 128 keys.
func (s *Store) GetAll(ctx context.Context, keys []string) (map[string]KV, error) {
	return s.getAll(ctx, keys, &s.counts.quorumReads)
}

func (s *Store) getAll(ctx context.Context, keys []string, count *atomic.Int64, opts ...clientv3.OpOption) (map[string]KV, error) {
	out := make(map[string]KV, len(keys))
	for start := 0; start < len(keys); start += maxTxnOps {
		var gets []clientv3.Op
		for _, k := range keys[start:min(start+maxTxnOps, len(keys))] {
			gets = append(gets, clientv3.OpGet(k, opts...))
		}
		count.Add(1)
		resp, err := s.client.Txn(ctx).Then(gets...).Commit()
		if err != nil {
			return nil, wrap("get", fmt.Sprintf("(%d keys)", len(gets)), err)
		}
		for _, r := range resp.Responses {
			for _, kv := range r.GetResponseRange().Kvs {
				out[string(kv.Key)] = kvOf(kv)
			}
		}
	}
	return out, nil
}

// ListLocal returns every value under prefix, sorted by key, as the etcd
// member the client is connected to has applied them (one serializable
// read, counted as local): no raft round, but it may miss writes not yet
// applied on that member. Use it only where such a miss is checked again
// or harmless.
func (s *Store) ListLocal(ctx context.Context, prefix string) ([]KV, error) {
	s.counts.localReads.Add(1)
	resp, err := s.client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithSerializable())
	if err != nil {
		return nil, wrap("list", prefix, err)
	}
	out := make([]KV, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out = append(out, kvOf(kv))
	}
	return out, nil
}
