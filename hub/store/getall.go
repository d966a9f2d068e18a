package store

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// GetLocalAll reads keys as GetLocal does, in one serializable
// transaction per 128 keys. Absent keys are absent from the map.
func (s *Store) GetLocalAll(ctx context.Context, keys []string) (map[string]KV, error) {
	return s.getAll(ctx, keys, &s.counts.localReads, clientv3.WithSerializable())
}

// GetAll reads keys as Get does, in one quorum read per 128 keys. Absent
// keys are absent from the map.
func (s *Store) GetAll(ctx context.Context, keys []string) (map[string]KV, error) {
	return s.getAll(ctx, keys, &s.counts.quorumReads)
}

func (s *Store) getAll(ctx context.Context, keys []string, count interface{ Add(int64) int64 }, opts ...clientv3.OpOption) (map[string]KV, error) {
	out := make(map[string]KV, len(keys))
	for start := 0; start < len(keys); start += maxTxnCompares {
		var gets []clientv3.Op
		for _, k := range keys[start:min(start+maxTxnCompares, len(keys))] {
			gets = append(gets, clientv3.OpGet(k, opts...))
		}
		count.Add(1)
		resp, err := s.client.Txn(ctx).Then(gets...).Commit()
		if err != nil {
			return nil, wrap("get", fmt.Sprintf("(%d keys)", len(gets)), err)
		}
		for _, r := range resp.Responses {
			for _, kv := range r.GetResponseRange().Kvs {
				out[string(kv.Key)] = KV{Key: string(kv.Key), Value: kv.Value, Revision: kv.ModRevision, CreateRevision: kv.CreateRevision}
			}
		}
	}
	return out, nil
}
