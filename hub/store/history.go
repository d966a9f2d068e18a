package store

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// GetAt returns the value key had at revision rev: ErrNotFound when it
// did not exist then, ErrCompacted when rev was compacted.
func (s *Store) GetAt(ctx context.Context, key string, rev int64) (KV, error) {
	s.counts.quorumReads.Add(1)
	resp, err := s.client.Get(ctx, key, clientv3.WithRev(rev))
	if err != nil {
		return KV{}, wrap("get", key, err)
	}
	if len(resp.Kvs) == 0 {
		return KV{}, wrap("get", key, ErrNotFound)
	}
	return kvOf(resp.Kvs[0]), nil
}

// ListRange returns at most limit values of the keys in [start, end),
// sorted by key, as they were at revision rev (0: the newest), the
// revision read at, and whether more keys follow in the range.
func (s *Store) ListRange(ctx context.Context, start, end string, rev int64, limit int) ([]KV, int64, bool, error) {
	opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(int64(limit))}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	s.counts.quorumReads.Add(1)
	resp, err := s.client.Get(ctx, start, opts...)
	if err != nil {
		return nil, 0, false, wrap("list", start, err)
	}
	out := make([]KV, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out = append(out, kvOf(kv))
	}
	return out, resp.Header.Revision, resp.More, nil
}

// PrefixEnd is the end of the key range of every key under prefix.
func PrefixEnd(prefix string) string { return clientv3.GetPrefixRangeEnd(prefix) }
