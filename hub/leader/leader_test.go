package leader

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
)

// waitTimeout bounds every poll; a takeover needs at most one TTL (1 s).
const waitTimeout = 30 * time.Second

// replica is one Elector running in the background with a lead function
// that records its terms and blocks until its term ends.
type replica struct {
	name   string
	el     *Elector
	fence  *store.Fence
	view   *store.Store // the fenced view
	cancel context.CancelFunc
	done   chan error
	// terms receives each term's context when elected.
	terms chan context.Context
}

func start(t *testing.T, st *store.Store, name string) *replica {
	t.Helper()
	r := &replica{name: name, fence: &store.Fence{}, done: make(chan error, 1), terms: make(chan context.Context, 10)}
	r.view = st.Fenced(r.fence)
	r.el = New(st.Client(), r.fence, Config{TTL: time.Second, Name: name}, hclog.NewNullLogger())
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		r.done <- r.el.Run(ctx, func(ctx context.Context) error {
			r.terms <- ctx
			<-ctx.Done()
			return nil
		})
	}()
	t.Cleanup(r.stop)
	return r
}

// stop ends Run and waits for it.
func (r *replica) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	<-r.done
}

// leaderOf polls until exactly one of rs leads and returns it.
func leaderOf(t *testing.T, rs ...*replica) *replica {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		var leading []*replica
		for _, r := range rs {
			if r.cancel != nil && r.el.IsLeader() {
				leading = append(leading, r)
			}
		}
		if len(leading) > 1 {
			t.Fatalf("%d replicas lead at once", len(leading))
		}
		if len(leading) == 1 {
			return leading[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no leader within %s", waitTimeout)
	return nil
}

func TestOneLeaderAndHandOver(t *testing.T) {
	st := etcdtest.Embedded(t)
	rs := []*replica{start(t, st, "a"), start(t, st, "b"), start(t, st, "c")}
	first := leaderOf(t, rs...)
	ctx := context.Background()
	if _, err := first.view.Put(ctx, store.Root+"test/by", []byte(first.name)); err != nil {
		t.Fatalf("Put through the leader's fenced view: %v", err)
	}
	for _, r := range rs {
		if r == first {
			continue
		}
		if _, err := r.view.Put(ctx, store.Root+"test/by", []byte(r.name)); !errors.Is(err, store.ErrNotLeader) {
			t.Errorf("Put through follower %s's view = %v; want ErrNotLeader", r.name, err)
		}
	}
	began := time.Now()
	first.stop() // resigns
	second := leaderOf(t, rs...)
	t.Logf("leader change after a resignation: %s", time.Since(began))
	if second == first {
		t.Fatalf("stopped replica %s still leads", first.name)
	}
	if _, err := first.view.Put(ctx, store.Root+"test/by", []byte(first.name)); !errors.Is(err, store.ErrNotLeader) {
		t.Errorf("Put through the stopped leader's view = %v; want ErrNotLeader", err)
	}
}

// TestLostSessionEndsTheTerm revokes the leader's lease behind its back, as
// etcd does when the leader could not keep it alive (partition, pause): the
// term's context ends, another replica leads, and the deposed one campaigns
// again.
func TestLostSessionEndsTheTerm(t *testing.T) {
	st := etcdtest.Embedded(t)
	a, b := start(t, st, "a"), start(t, st, "b")
	first := leaderOf(t, a, b)
	term := <-first.terms
	key, err := leaderKey(st)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if _, err := st.Client().Revoke(context.Background(), clientv3.LeaseID(key.Lease)); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	select {
	case <-term.Done():
		t.Logf("term ended %s after the revocation: %v", time.Since(began), context.Cause(term))
	case <-time.After(waitTimeout):
		t.Fatalf("term of %s still running %s after its lease was revoked", first.name, waitTimeout)
	}
	second := leaderOf(t, a, b)
	if second == first {
		t.Fatalf("%s leads again; want the replica that was waiting", first.name)
	}
	if first.el.Terms() != 1 || second.el.Terms() != 1 {
		t.Errorf("terms = %d, %d; want 1 each", first.el.Terms(), second.el.Terms())
	}
	// The deposed replica waits in the queue again: stopping the new leader
	// hands leadership back.
	second.stop()
	if got := leaderOf(t, a, b); got != first {
		t.Errorf("leader after %s stopped = %s; want %s", second.name, got.name, first.name)
	}
}

// leaderKey returns the current leader's key-value.
func leaderKey(st *store.Store) (*struct {
	Key   string
	Lease int64
}, error) {
	resp, err := st.Client().Get(context.Background(), DefaultPrefix+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		return nil, fmt.Errorf("get leader: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return nil, errors.New("no leader key")
	}
	return &struct {
		Key   string
		Lease int64
	}{string(resp.Kvs[0].Key), resp.Kvs[0].Lease}, nil
}

// TestLeadErrorEndsRun: a controller failing during a term is fatal, as it
// was before elections.
func TestLeadErrorEndsRun(t *testing.T) {
	st := etcdtest.Embedded(t)
	boom := errors.New("boom")
	el := New(st.Client(), &store.Fence{}, Config{TTL: time.Second}, hclog.NewNullLogger())
	err := el.Run(context.Background(), func(context.Context) error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("Run = %v; want %v", err, boom)
	}
}

// TestAloneLeadsWithoutSession: the only replica (a hub on its embedded
// etcd) leads at once, although a key an earlier process left under the
// prefix has an hour of lease left (a campaign would wait for it), and its
// writes go through. It holds no session: every lease in etcd running out
// (as a session's does when the process is too starved of CPU to keep it
// alive) neither ends its term nor fences its writes.
func TestAloneLeadsWithoutSession(t *testing.T) {
	st := etcdtest.Embedded(t)
	c := context.Background()
	stale, err := st.Client().Grant(c, 3600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().Put(c, DefaultPrefix+"/694d9a1b2c3d4e5f", "killed", clientv3.WithLease(stale.ID)); err != nil {
		t.Fatal(err)
	}
	fence := &store.Fence{}
	view := st.Fenced(fence)
	el := New(st.Client(), fence, Config{TTL: time.Second, Name: "alone", Alone: true}, hclog.NewNullLogger())
	ctx, cancel := context.WithCancel(c)
	terms, done := make(chan context.Context, 1), make(chan error, 1)
	go func() {
		done <- el.Run(ctx, func(ctx context.Context) error { terms <- ctx; <-ctx.Done(); return nil })
	}()
	var term context.Context
	select {
	case term = <-terms:
	case <-time.After(waitTimeout):
		t.Fatalf("the only replica did not lead within %s (a key of an earlier process has an hour of lease left)", waitTimeout)
	}
	if !el.IsLeader() {
		t.Error("IsLeader = false during the term")
	}
	if _, err := view.Put(c, "/tether/test/a", []byte("1")); err != nil {
		t.Errorf("write while leading alone: %v", err)
	}

	leases, err := st.Client().Leases(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Leases {
		if _, err := st.Client().Revoke(c, l.ID); err != nil {
			t.Fatalf("Revoke: %v", err)
		}
	}
	if _, err := view.Put(c, "/tether/test/a", []byte("2")); err != nil {
		t.Errorf("write after every lease in etcd ran out: %v; want it through", err)
	}
	if term.Err() != nil {
		t.Errorf("term ended (%v) when every lease in etcd ran out", context.Cause(term))
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	if el.IsLeader() {
		t.Error("IsLeader = true after Run returned")
	}
	if _, err := view.Put(c, "/tether/test/a", []byte("3")); !errors.Is(err, store.ErrNotLeader) {
		t.Errorf("write after Run returned = %v; want ErrNotLeader", err)
	}
}
