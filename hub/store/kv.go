package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// KV is one stored value with its etcd revisions.
type KV struct {
	Key   string
	Value []byte
	// Revision is the etcd revision of the value's last change: the version
	// clients see and pass back for optimistic updates.
	Revision int64
	// CreateRevision is the revision at which the key was created.
	CreateRevision int64
}

// kvOf is the KV of an etcd key-value.
func kvOf(kv *mvccpb.KeyValue) KV {
	return KV{Key: string(kv.Key), Value: kv.Value, Revision: kv.ModRevision, CreateRevision: kv.CreateRevision}
}

// Get returns the value at key, or ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (KV, error) {
	s.counts.quorumReads.Add(1)
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return KV{}, wrap("get", key, err)
	}
	if len(resp.Kvs) == 0 {
		return KV{}, wrap("get", key, ErrNotFound)
	}
	return kvOf(resp.Kvs[0]), nil
}

// Put writes value at key whatever is there and returns the new revision.
func (s *Store) Put(ctx context.Context, key string, value []byte) (int64, error) {
	if s.fence == nil {
		s.counts.writes.Add(1)
		resp, err := s.client.Put(ctx, key, string(value))
		if err != nil {
			return 0, wrap("put", key, err)
		}
		return resp.Header.Revision, nil
	}
	resp, err := s.write(ctx, "put", key, nil, clientv3.OpPut(key, string(value)))
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// Create writes value at key only if the key does not exist (ErrExists).
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	return s.txnPut(ctx, "create", key, value, clientv3.Compare(clientv3.CreateRevision(key), "=", 0), ErrExists)
}

// Update writes value at key only if the key's revision is still rev
// (ErrConflict otherwise, ErrNotFound if it is gone).
func (s *Store) Update(ctx context.Context, key string, value []byte, rev int64) (int64, error) {
	return s.txnPut(ctx, "update", key, value, clientv3.Compare(clientv3.ModRevision(key), "=", rev), ErrConflict)
}

func (s *Store) txnPut(ctx context.Context, op, key string, value []byte, cmp clientv3.Cmp, failed error) (int64, error) {
	resp, err := s.write(ctx, op, key, []clientv3.Cmp{cmp}, clientv3.OpPut(key, string(value)))
	if err != nil {
		return 0, err
	}
	if !resp.Succeeded {
		if failed == ErrConflict && len(resp.Responses[0].GetResponseRange().Kvs) == 0 {
			failed = ErrNotFound
		}
		return 0, wrap(op, key, failed)
	}
	return resp.Header.Revision, nil
}

// Delete removes key; with rev > 0 only if its revision is still rev.
// It returns ErrNotFound when there was nothing to delete.
func (s *Store) Delete(ctx context.Context, key string, rev int64) (int64, error) {
	cmp := clientv3.Compare(clientv3.CreateRevision(key), ">", 0)
	failed := ErrNotFound
	if rev > 0 {
		cmp, failed = clientv3.Compare(clientv3.ModRevision(key), "=", rev), ErrConflict
	}
	resp, err := s.write(ctx, "delete", key, []clientv3.Cmp{cmp}, clientv3.OpDelete(key))
	if err != nil {
		return 0, err
	}
	if !resp.Succeeded {
		if len(resp.Responses[0].GetResponseRange().Kvs) == 0 {
			failed = ErrNotFound
		}
		return 0, wrap("delete", key, failed)
	}
	return resp.Header.Revision, nil
}

// List returns every value under prefix, sorted by key, and the store
// revision they were read at (a Watch from rev+1 misses nothing).
func (s *Store) List(ctx context.Context, prefix string) ([]KV, int64, error) {
	s.counts.quorumReads.Add(1)
	resp, err := s.client.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, 0, wrap("list", prefix, err)
	}
	out := make([]KV, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out = append(out, kvOf(kv))
	}
	s.counts.seen.Raise(resp.Header.Revision)
	return out, resp.Header.Revision, nil
}

// listPageKeys is how many keys one request of ListEach reads: 64
// bindings placed on a thousand clusters (150 KiB each with their
// aggregated status) are some 10 MB.
const listPageKeys = 64

// ListEach calls each with every key under prefix, in key order, all as of
// one revision, which it returns; it reads them listPageKeys at a time, so
// that a list of large values (the bindings of a restarted hub's
// controllers) is never held whole, nor one per controller at once. A
// revision compacted before the last page is read fails it with
// ErrCompacted, as a watch from it would.
func (s *Store) ListEach(ctx context.Context, prefix string, each func(KV)) (int64, error) {
	return s.ListEachAt(ctx, prefix, 0, each)
}

// ListEachAt is ListEach as of revision rev (0: the newest), so that
// several prefixes can be listed as of one revision (hub/view).
func (s *Store) ListEachAt(ctx context.Context, prefix string, rev int64, each func(KV)) (int64, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	from := prefix
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(listPageKeys)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		s.counts.quorumReads.Add(1)
		resp, err := s.client.Get(ctx, from, opts...)
		if err != nil {
			return 0, wrap("list", prefix, err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
			s.counts.seen.Raise(rev)
		}
		for _, kv := range resp.Kvs {
			each(kvOf(kv))
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Count returns how many keys are under prefix.
func (s *Store) Count(ctx context.Context, prefix string) (int64, error) {
	s.counts.quorumReads.Add(1)
	resp, err := s.client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, wrap("count", prefix, err)
	}
	return resp.Count, nil
}

// ErrIdentityLost is Identity's error for a store that holds data but no
// hub identity: the key was deleted or lost. A new identity would make
// every agent take the hub for another one.
var ErrIdentityLost = errors.New("store: the hub identity is missing from a store that holds data")

// dataPrefixes are the prefixes whose keys mean a store is in use.
var dataPrefixes = []string{ObjectsPrefix, BindingsPrefix, ClustersPrefix, AgentsPrefix}

// Identity returns the hub identity. A store without one gets restore
// when it is set (the identity the operator gives back), else a random
// one, but only while it holds no data (no object, binding, cluster or
// agent record): a store that does gets ErrIdentityLost, naming what it
// holds, since agents whose works came from the lost identity would take
// a new one for another hub. restore is ignored when an identity exists.
func (s *Store) Identity(ctx context.Context, restore string) (string, error) {
	kv, err := s.Get(ctx, identityKey)
	if err == nil {
		return string(kv.Value), nil
	}
	if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	id := restore
	if id == "" {
		if err := s.refuseLostIdentity(ctx); err != nil {
			return "", err
		}
		buf := make([]byte, 16)
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		id = hex.EncodeToString(buf)
	}
	if _, err := s.Create(ctx, identityKey, []byte(id)); err != nil && !errors.Is(err, ErrExists) {
		return "", err
	}
	kv, err = s.Get(ctx, identityKey) // another replica may have won the race
	return string(kv.Value), err
}

// refuseLostIdentity returns ErrIdentityLost when the store holds data.
func (s *Store) refuseLostIdentity(ctx context.Context) error {
	for _, prefix := range dataPrefixes {
		n, err := s.Count(ctx, prefix)
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w (%d keys under %s)", ErrIdentityLost, n, prefix)
		}
	}
	return nil
}

// Epoch returns the store's epoch, a random id written once when the store
// is new; created is true when this call wrote it (the store had none:
// it is new, wiped, or older than epochs).
func (s *Store) Epoch(ctx context.Context) (epoch string, created bool, err error) {
	kv, err := s.Get(ctx, epochKey)
	if err == nil {
		return string(kv.Value), false, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return "", false, err
	}
	buf := make([]byte, 16)
	if _, err := rand.Read(buf); err != nil {
		return "", false, err
	}
	id := hex.EncodeToString(buf)
	if _, err := s.Create(ctx, epochKey, []byte(id)); err != nil {
		if !errors.Is(err, ErrExists) {
			return "", false, err
		}
		kv, err = s.Get(ctx, epochKey) // another replica won the race
		return string(kv.Value), false, err
	}
	return id, true, nil
}

// Revision returns the store's current revision: etcd's, which only grows
// unless the store is restored from a snapshot.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	s.counts.quorumReads.Add(1)
	resp, err := s.client.Get(ctx, epochKey, clientv3.WithCountOnly())
	if err != nil {
		return 0, wrap("revision", epochKey, err)
	}
	return resp.Header.Revision, nil
}

// Compact discards history before rev; watches from older revisions then
// get ErrCompacted.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	_, err := s.client.Compact(ctx, rev, clientv3.WithCompactPhysical())
	return wrap("compact", "", err)
}

// Size reports the number of keys under Root and the etcd database size in
// bytes, as measured by the first endpoint.
func (s *Store) Size(ctx context.Context) (keys, dbBytes int64, err error) {
	if keys, err = s.Count(ctx, Root); err != nil {
		return 0, 0, err
	}
	st, err := s.client.Status(ctx, s.client.Endpoints()[0])
	if err != nil {
		return 0, 0, wrap("status", "", err)
	}
	return keys, st.DbSize, nil
}
