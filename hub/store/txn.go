package store

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// txnBytes is how many bytes of values Chunks puts in one transaction:
// below etcd's default --max-request-bytes (1.5 MiB), which a single
// value may fill alone.
const txnBytes = 1 << 20

// Op is one part of a transaction (Commit): a conditional write of Value
// at Key, or with Check only the condition.
type Op struct {
	Key   string
	Value []byte
	// Rev is the revision Key must still be at; 0: Key must be absent.
	Rev   int64
	Check bool
}

// CreateOp writes value at key if key is absent.
func CreateOp(key string, value []byte) Op { return Op{Key: key, Value: value} }

// UpdateOp writes value at key if key is still at rev.
func UpdateOp(key string, value []byte, rev int64) Op { return Op{Key: key, Value: value, Rev: rev} }

// CheckOp writes nothing: key must still be at rev (0: still absent).
func CheckOp(key string, rev int64) Op { return Op{Key: key, Rev: rev, Check: true} }

func (o Op) cmp() clientv3.Cmp {
	if o.Rev == 0 {
		return clientv3.Compare(clientv3.CreateRevision(o.Key), "=", 0)
	}
	return clientv3.Compare(clientv3.ModRevision(o.Key), "=", o.Rev)
}

// OpError is Commit's error for an op whose condition did not hold: the
// op at Index of the call's ops.
type OpError struct {
	Index int
	Err   error
}

func (e *OpError) Error() string { return e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }

// failure is the error of an op whose condition did not hold, from the
// key's revisions as the failed transaction read them (nil: absent).
func (o Op) failure(kv *KV) error {
	op := "update"
	switch {
	case o.Check:
		op = "check"
	case o.Rev == 0:
		op = "create"
	}
	switch {
	case o.Rev == 0 && kv != nil && !o.Check:
		return wrap(op, o.Key, ErrExists)
	case o.Rev != 0 && kv == nil:
		return wrap(op, o.Key, ErrNotFound)
	case o.Rev == 0 && kv == nil, o.Rev != 0 && kv.Revision == o.Rev:
		return nil
	}
	return wrap(op, o.Key, ErrConflict)
}

// Chunks splits ops, in order, into groups that each fit one transaction
// of Commit: at most 127 ops (a fenced view adds a compare to etcd's
// default --max-txn-ops, 128) and about txnBytes of values (one larger
// value goes alone).
func Chunks(ops []Op) [][]Op {
	var out [][]Op
	start, bytes := 0, 0
	for i, o := range ops {
		if i > start && (i-start == maxTxnCompares-1 || bytes+len(o.Value) > txnBytes) {
			out = append(out, ops[start:i])
			start, bytes = i, 0
		}
		bytes += len(o.Value)
	}
	if start < len(ops) {
		out = append(out, ops[start:])
	}
	return out
}

// Commit applies ops as one etcd transaction: every write if every
// condition holds, else nothing. It returns the revision of the writes
// (or, with checks only, the revision the checks were made at) and, when
// a condition failed, an *OpError for the first op whose condition failed
// (ErrExists, ErrConflict or ErrNotFound, with its key). ops must fit one
// transaction (Chunks). A transaction of checks only is a quorum read.
func (s *Store) Commit(ctx context.Context, ops []Op) (int64, error) {
	cmps := make([]clientv3.Cmp, 0, len(ops)+1)
	var thens []clientv3.Op
	elses := make([]clientv3.Op, 0, len(ops)+1)
	for _, o := range ops {
		cmps = append(cmps, o.cmp())
		if !o.Check {
			thens = append(thens, clientv3.OpPut(o.Key, string(o.Value)))
		}
		elses = append(elses, clientv3.OpGet(o.Key, clientv3.WithKeysOnly()))
	}
	if len(thens) == 0 {
		s.counts.quorumReads.Add(1)
		resp, err := s.client.Txn(ctx).If(cmps...).Else(elses...).Commit()
		if err != nil {
			return 0, wrap("check", fmt.Sprintf("(%d keys)", len(ops)), err)
		}
		return resp.Header.Revision, s.failed(ops, resp)
	}
	resp, err := s.txn(ctx, "commit", fmt.Sprintf("(%d keys)", len(ops)), cmps, thens, elses)
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, s.failed(ops, resp)
}

// failed returns nil for a transaction that succeeded, else the error of
// the first op whose condition the else branch's reads show failed.
func (s *Store) failed(ops []Op, resp *clientv3.TxnResponse) error {
	if resp.Succeeded {
		return nil
	}
	for i, o := range ops {
		var kv *KV
		if kvs := resp.Responses[i].GetResponseRange().Kvs; len(kvs) > 0 {
			kv = &KV{Key: o.Key, Revision: kvs[0].ModRevision, CreateRevision: kvs[0].CreateRevision}
		}
		if err := o.failure(kv); err != nil {
			return &OpError{Index: i, Err: err}
		}
	}
	return wrap("commit", "", ErrConflict) // a condition failed between the compare and the read: not possible in one txn
}

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
