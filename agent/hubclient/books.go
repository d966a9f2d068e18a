package hubclient

import (
	"fmt"
	"sort"
	"time"

	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Books is the agent's pure protocol state: what the hubs have told it (the
// works held, the hub each came from, the digests reported) and where the
// current stream is in its sync. It does no I/O: each event returns the
// Effects the caller carries out (persist, apply, delete, send). It is not
// safe for concurrent use.
//
// Deletion rules (agent/doc.go): a work's objects are deleted only for a
// WorkDelete from the hub identity the work came from, received on a stream
// of that hub that has reached SyncDone (deletes that arrive before it wait
// for it and are dropped if the stream ends first); when that hub's
// authoritative SyncDone does not list the work (and the stream did not
// send it); or when the work has been orphaned (held from a hub that does
// not claim it) for the grace period. A decided deletion is persisted with
// the work (state.Held.Removal) before it starts, and resumed on start.
type Books struct {
	hub     string                  // the identity of the hub the works came from
	lin     state.Lineage           // what the agent saw of that hub's store
	works   map[string]state.Held   // by key
	digests map[string]state.Digest // reported, by key
	// changes counts the changes of digests, taken what it was at the last
	// TakeDigests: they changed since when the two differ.
	changes, taken uint64
	// deleting holds the keys whose deletion was decided and not yet done.
	deleting map[string]bool
	// acks holds, per key, the latest apply result and whether it reached
	// the hub.
	acks map[string]ackState
	s    *session // the current stream; nil when none is up
}

type ackState struct {
	ack       *agentv1.Ack
	delivered bool
}

// session is the state of one stream.
type session struct {
	hub    string // from Welcome; "" until then
	synced bool   // SyncDone received
	// unvouched is true when the stream's SyncDone said the hub's view is
	// not authoritative (its store was lost, regressed or does not
	// decode), or the agent holds the hub not authoritative for it
	// (Lineage.Distrust): no work is orphaned and no orphan evicted until
	// a hub vouches again.
	unvouched bool
	mentioned map[string]bool // keys upserted before SyncDone
	// listed are the keys Hello listed as held from its hub: the only
	// ones a key set of that hub may delete (the hub looked them up).
	listed   map[string]bool
	deferred map[string]*agentv1.WorkDelete // WorkDeletes before SyncDone, by key
}

// Deletion is a decided deletion of a held work's objects: the work and
// how, why and on whose word (Removal.Evicted is true for an eviction after
// the grace period, false for a hub's word, acknowledged once done).
type Deletion struct {
	Work state.Work
	state.Removal
}

// Effects are what the caller must do after an event, in this order:
// write Persist (and Hub when set), then apply, delete and send. Every
// Delete has its record (the work with Removal set) in Persist: a deletion
// whose record was not written must not start (Undecide it).
type Effects struct {
	Hub string // the new hub identity to persist; "" for no change
	// Lineage is set when the hub record's lineage changed (Books.Lineage),
	// to write at once with LineageNow, else with the next periodic write.
	Lineage, LineageNow bool
	Persist             []state.Held // works to write
	Apply               []state.Work // works to apply
	Delete              []Deletion   // deletions to carry out
	Send                []*agentv1.AgentMessage
	// Notes say what was decided and why, for the log: deletes deferred
	// or ignored, works orphaned, identity changes.
	Notes []string
}

// NewBooks returns the books of a loaded state.
func NewBooks(snap state.Snapshot) *Books {
	b := &Books{
		hub:      snap.HubIdentity,
		lin:      snap.Lineage,
		works:    make(map[string]state.Held, len(snap.Works)),
		digests:  make(map[string]state.Digest, len(snap.Digests)),
		deleting: map[string]bool{},
		acks:     map[string]ackState{},
	}
	for k, h := range snap.Works {
		b.works[k] = h
		if h.Removal != nil {
			b.deleting[k] = true
		}
	}
	for k, d := range snap.Digests {
		b.digests[k] = d
	}
	return b
}

// HubIdentity returns the identity of the hub last welcomed.
func (b *Books) HubIdentity() string { return b.hub }

// Held returns the work held under key.
func (b *Books) Held(key string) (state.Held, bool) {
	h, ok := b.works[key]
	return h, ok
}

// Len returns the number of works held.
func (b *Books) Len() int { return len(b.works) }

// Start returns every held work, sorted by key, but those with a pending
// deletion: the agent applies them on start, with or without a hub.
func (b *Books) Start() []state.Work {
	out := make([]state.Work, 0, len(b.works))
	for _, k := range state.Keys(b.works) {
		if !b.deleting[k] && !b.works[k].Unmanaged {
			out = append(out, b.works[k].Work)
		}
	}
	return out
}

// Resume returns the deletions decided before a restart and not done,
// sorted by key: the agent carries them out on start.
func (b *Books) Resume() []Deletion {
	var out []Deletion
	for _, k := range state.Keys(b.works) {
		if h := b.works[k]; h.Removal != nil {
			out = append(out, Deletion{Work: h.Work, Removal: *h.Removal})
		}
	}
	return out
}

// Hello opens a stream: it returns the Hello to send. It lists only the
// works held from the hub last welcomed (so no other hub's word can delete
// them) and their digests at the held version.
func (b *Books) Hello(agentVersion string) *agentv1.Hello {
	b.s = &session{mentioned: map[string]bool{}, listed: map[string]bool{}, deferred: map[string]*agentv1.WorkDelete{}}
	h := &agentv1.Hello{AgentVersion: agentVersion, LastHubIdentity: b.hub,
		LastStoreEpoch: b.lin.Epoch, LastStoreRevision: b.lin.Revision, LastAdoptionId: b.lin.Adoption}
	if b.hub == "" {
		return h
	}
	for _, k := range state.Keys(b.works) {
		w := b.works[k]
		if w.Hub != b.hub || w.Orphaned() || w.Unmanaged || b.deleting[k] {
			continue
		}
		h.HeldWorks = append(h.HeldWorks, &agentv1.HeldWork{WorkKey: k, Version: w.Work.Version})
		b.s.listed[k] = true
		if d, ok := b.digests[k]; ok && d.Version == w.Work.Version {
			h.ReportedStatuses = append(h.ReportedStatuses, &agentv1.ReportedStatus{
				WorkKey: k, Version: d.Version, StatusDigest: d.Digest,
			})
		}
	}
	return h
}

// EndStream forgets the stream: deletes deferred on it are dropped.
func (b *Books) EndStream() { b.s = nil }

// Synced reports whether the current stream has reached SyncDone.
func (b *Books) Synced() bool { return b.s != nil && b.s.synced }

// Welcome records the hub's identity for the stream, and decides whether
// the agent trusts it (lineage.go): a hub with another identity or store
// epoch, or whose store is behind the revision the agent saw, is held not
// authoritative for this agent until an adoption names the identity its
// works came from. A new identity is taken only then (or on first start).
func (b *Books) Welcome(w *agentv1.Welcome, now time.Time) (Effects, error) {
	if b.s == nil || b.s.hub != "" {
		return Effects{}, fmt.Errorf("%w: Welcome outside the start of a stream", ErrProtocol)
	}
	id := w.GetHubIdentity()
	if id == "" {
		return Effects{}, fmt.Errorf("%w: Welcome without a hub identity", ErrProtocol)
	}
	b.s.hub = id
	var e Effects
	if b.hub == "" {
		b.hub, e.Hub = id, id
		b.lin = state.Lineage{Epoch: w.GetStoreEpoch(), Revision: w.GetStoreRevision(), Adoption: w.GetAdoption().GetId()}
		e.saveLineage(true)
		return e, nil
	}
	b.welcomeLineage(w, now, &e)
	if id != b.hub && !b.lin.Distrusted() {
		e.note("hub identity changed from %q to %q by an adoption: works from %q that the new hub does not have are kept, unmanaged", b.hub, id, b.hub)
		b.hub, e.Hub = id, id
	}
	b.s.unvouched = b.lin.Distrusted()
	return e, nil
}

// Upsert records a work from the hub: held from the stream's hub, claimed,
// to apply.
func (b *Books) Upsert(u *agentv1.WorkUpsert) (Effects, error) {
	if err := b.welcomed("WorkUpsert"); err != nil {
		return Effects{}, err
	}
	if u.GetWorkKey() == "" || u.GetVersion() == "" {
		return Effects{}, fmt.Errorf("%w: WorkUpsert without a work key or version", ErrProtocol)
	}
	key := u.GetWorkKey()
	if !b.s.synced {
		b.s.mentioned[key] = true
	}
	if e, refused := b.refuseChange(u); refused {
		return e, nil
	}
	var e Effects
	b.raise(u.GetStoreRevision(), &e)
	delete(b.s.deferred, key)
	delete(b.deleting, key)
	h := state.Held{Work: state.FromUpsert(u), Hub: b.s.hub}
	if old, ok := b.works[key]; ok && b.lin.Distrusted() {
		h.Hub = old.Hub // a hub not trusted claims nothing it did not place
	}
	b.works[key] = h
	e.Persist, e.Apply = []state.Held{h}, []state.Work{h.Work}
	return e, nil
}

// refuseChange refuses, while the agent holds the hub not authoritative
// for it, an upsert that would change a work it holds (a restored store
// sends older versions): acknowledged FAILED with why, nothing applied.
// New works, and the version held, go through.
func (b *Books) refuseChange(u *agentv1.WorkUpsert) (Effects, bool) {
	h, ok := b.works[u.GetWorkKey()]
	if !b.lin.Distrusted() || !ok || h.Unmanaged || b.deleting[u.GetWorkKey()] || h.Work.Version == u.GetVersion() {
		return Effects{}, false
	}
	var e Effects
	e.note("WorkUpsert of %q refused: version %s would replace %s from a hub this agent holds not authoritative for it", u.GetWorkKey(), u.GetVersion(), h.Work.Version)
	e.Send = append(e.Send, &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{
		WorkKey: u.GetWorkKey(), Version: u.GetVersion(), Result: agentv1.ApplyResult_APPLY_RESULT_FAILED,
		Message: "not applied: the agent holds this hub not authoritative for it (" + b.lin.Distrust + "); it keeps version " +
			h.Work.Version + " until an operator adopts the fleet on the hub",
	}}})
	return e, true
}

func (b *Books) welcomed(what string) error {
	if b.s == nil || b.s.hub == "" {
		return fmt.Errorf("%w: %s before Welcome", ErrProtocol, what)
	}
	return nil
}

func (e *Effects) note(format string, args ...any) {
	e.Notes = append(e.Notes, fmt.Sprintf(format, args...))
}

func (e *Effects) merge(o Effects) {
	if o.Hub != "" {
		e.Hub = o.Hub
	}
	e.Lineage, e.LineageNow = e.Lineage || o.Lineage, e.LineageNow || o.LineageNow
	e.Persist = append(e.Persist, o.Persist...)
	e.Apply = append(e.Apply, o.Apply...)
	e.Delete = append(e.Delete, o.Delete...)
	e.Send = append(e.Send, o.Send...)
	e.Notes = append(e.Notes, o.Notes...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// orphan marks h orphaned at now unless it already is.
func orphan(h state.Held, now time.Time) state.Held {
	if !h.Orphaned() {
		h.OrphanedSince = now
	}
	return h
}
