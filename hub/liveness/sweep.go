package liveness

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tetherproj/tether/hub/store"
)

// sweep deletes the records of the clusters this replica has written no
// renewal for in a lease duration, by its own clock (their agents went
// quiet or to another replica), if they are still under lease: so that a
// record any replica finds by listing is less than a lease duration old
// by the clock of the replica that wrote it, and Follow may date what it
// lists by its own clock. Up to maxBatch deletes go in one transaction. A
// follower watching sees a deleted renewal only stop the renewals. A
// cluster heard from again is written at once.
func (p *Publisher) sweep(ctx context.Context, lease clientv3.LeaseID) error {
	now := p.clock.Now()
	p.mu.Lock()
	var quiet []string
	for cluster, w := range p.written {
		if _, waiting := p.pending[cluster]; !waiting && now.Sub(w.at) >= p.ttl {
			quiet = append(quiet, cluster)
			delete(p.written, cluster)
		}
	}
	p.mu.Unlock()
	var ops []clientv3.Op
	ours := func(key string) clientv3.Cmp { return clientv3.Compare(clientv3.LeaseValue(key), "=", lease) }
	for i, cluster := range quiet {
		for _, key := range []string{store.LivenessKey(cluster), store.HeartbeatKey(cluster)} {
			ops = append(ops, clientv3.OpTxn([]clientv3.Cmp{ours(key)}, []clientv3.Op{clientv3.OpDelete(key)}, nil))
		}
		if len(ops)+2 <= maxBatch && i < len(quiet)-1 {
			continue
		}
		if _, err := p.client.Txn(ctx).Then(ops...).Commit(); err != nil {
			return fmt.Errorf("delete the liveness records of %d quiet clusters: %w", len(ops)/2, err)
		}
		ops = ops[:0]
	}
	return nil
}
