package store

import (
	"context"
	"fmt"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
)

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
