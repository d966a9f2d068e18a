package agentapi

import (
	"context"
	"fmt"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/authority"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// DefaultCatchUpTimeout bounds how long a stream waits for this replica's
// renderer to reach the store revision its agent has seen (Hello's
// last_store_revision) before it computes the agent's difference; past
// it the stream ends with Goodbye SHUTDOWN, and the agent tries another
// replica first.
const DefaultCatchUpTimeout = 10 * time.Second

// catchUpRetry is the retry_after of that Goodbye.
const catchUpRetry = 2 * time.Second

// StoreFollower is what a Works may also implement (the renderer does):
// the store revision whose changes it has all published, and a wait for
// one. A replica that lags its store (cut off from etcd, slow to apply)
// would otherwise compute a returning agent's difference from an older
// view than the agent holds: downgrades, and deletes of what it lacks.
type StoreFollower interface {
	StoreRevision() int64
	WaitApplied(ctx context.Context, rev int64) bool
}

// observe tells the authority what the agent's Hello says of the store its
// works came from (a restored store is found there: hub/authority).
func (s *Server) observe(ctx context.Context, cluster string, hello *agentv1.Hello) {
	if s.cfg.Authority == nil {
		return
	}
	s.cfg.Authority.ObserveAgent(ctx, authority.Lineage{Cluster: cluster, HeldWorks: len(hello.GetHeldWorks()),
		Epoch: hello.GetLastStoreEpoch(), Revision: hello.GetLastStoreRevision()})
}

// catchUp waits until the works reflect at least the store revision the
// agent has seen, when it saw it from this store; it returns the store
// revision the works reflect now. A hub that is not authoritative (its
// store went back: the revision may never come) does not wait: its
// Welcome then carries the lower revision, and the agent holds it not
// authoritative for it. An error ends the stream.
func (s *Server) catchUp(ctx context.Context, st *stream, hello *agentv1.Hello) (int64, error) {
	f, ok := s.works.(StoreFollower)
	if !ok {
		return 0, nil
	}
	want := hello.GetLastStoreRevision()
	if want <= f.StoreRevision() || hello.GetLastStoreEpoch() != s.storeEpoch() || !s.authoritative() {
		return f.StoreRevision(), nil
	}
	wctx, cancel := context.WithTimeout(ctx, s.cfg.CatchUpTimeout)
	defer cancel()
	if f.WaitApplied(wctx, want) {
		return f.StoreRevision(), nil
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return 0, retryAfter{err: fmt.Errorf("%w: this hub replica has applied the store up to revision %d, behind revision %d the agent of cluster %q has seen; it catches up",
		ErrShutdown, f.StoreRevision(), want, st.cluster), after: catchUpRetry}
}

// authoritative reports whether the hub may cause deletes.
func (s *Server) authoritative() bool {
	if s.cfg.Authority == nil {
		return true
	}
	ok, _ := s.cfg.Authority.Authoritative()
	return ok
}

// storeEpoch is the store's epoch; "" without an authority.
func (s *Server) storeEpoch() string {
	if s.cfg.Authority == nil {
		return ""
	}
	return s.cfg.Authority.Epoch()
}

// welcome is the stream's Welcome: the hub's identity and settings, and
// the lineage of the works it sends (store epoch and revision, the latest
// adoption).
func (s *Server) welcome(models []*agentv1.ResourceModel, storeRev int64) *agentv1.HubMessage {
	msg := s.cfg.welcome(models)
	w := msg.GetWelcome()
	w.StoreEpoch, w.StoreRevision = s.storeEpoch(), storeRev
	if s.cfg.Authority != nil {
		if ad := s.cfg.Authority.Adoption(); ad != nil {
			w.Adoption = &agentv1.Adoption{Id: ad.ID, Identities: ad.Identities, DeleteUnknown: ad.DeleteUnknown,
				AdoptedAt: timestamppb.New(ad.At)}
		}
	}
	return msg
}
