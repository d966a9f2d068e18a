package syncstate

import (
	"slices"
	"sort"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Change is one change to a cluster's works. Work set means create or
// replace the work; Work nil means the hub positively knows the work is
// gone, and Policy says what to do with its objects; Keep (only in
// Input.Gone) means the hub has no content to send but the cluster is to
// keep the work (its render failed, its dispatching is suspended, it is
// being evicted).
type Change struct {
	// Key is the work's key.
	Key string
	// Work is the new content, or nil for a removal.
	Work *agentv1.WorkUpsert
	// Policy is the removed work's deletion policy (when Work is nil).
	Policy agentv1.DeletionPolicy
	// Reason is why the work was removed (when Work is nil), for the
	// agent's log and metrics and its Namespace/CRD rule.
	Reason agentv1.DeleteReason
	// Keep, with Work nil, is no removal: the hub vouches that the cluster
	// keeps the work it holds; its key goes into SyncDone's key set.
	Keep bool
}

// Digest is the status the hub holds for one work: the version it
// described and the agent's digest of it.
type Digest struct {
	Version string
	Digest  string
}

// Input is what the initial difference of a stream depends on.
type Input struct {
	// HubIdentity is this hub's identity (store.Identity).
	HubIdentity string
	// Hello is the agent's first message; nil is an empty Hello.
	Hello *agentv1.Hello
	// Desired is every work the cluster should hold now. Keys are unique.
	Desired []*agentv1.WorkUpsert
	// Withheld are the keys of works the cluster should hold that the
	// stream does not serve now (over the cluster's works limit,
	// hub/agentapi): those the agent holds go into SyncDone's key set, so
	// that it keeps them; none is sent or deleted.
	Withheld []string
	// Gone are removals (Work nil) for keys of DeleteCandidates that the hub
	// positively knows are gone, and Keep entries for those it vouches the
	// cluster keeps. Others are ignored. A candidate in neither is absent
	// from SyncDone's key set: the agent deletes it.
	Gone []Change
	// Digests are the status digests the hub holds, by work key.
	Digests map[string]Digest
	// NotAuthoritative says the hub cannot vouch that Desired is its
	// complete view of the cluster's works (its store looks lost or
	// regressed, or it has not rendered everything yet): SyncDone then
	// carries no key set and the agent deletes nothing for its absence.
	NotAuthoritative bool
}

// op is one queued outbound work message: an upsert or a removal.
type op struct {
	work   *agentv1.WorkUpsert // nil for a removal
	policy agentv1.DeletionPolicy
	reason agentv1.DeleteReason
}

// Session is the hub's state of one agent stream. It is not safe for
// concurrent use; its owner serializes calls.
type Session struct {
	// state is what the session knows of each work key: the cluster's
	// latest content, the version the agent holds, the upsert or delete
	// awaiting its ack. A key with none of these is not in it.
	state   map[string]workState
	desired int // keys of state with desired content: Works
	pending int // keys of state with an upsert or delete unacknowledged: Pending
	queue   Queue[op]
	barrier uint64   // queue sequence of the last initial entry
	synced  bool     // SyncDone was returned by Next
	request []string // keys for the StatusRequest after SyncDone; nil: none
	// keys are the keys of Input.Desired, of the held keys of
	// Input.Withheld and of the Keep entries of Input.Gone, sorted, for
	// SyncDone.work_keys; nil when the hub is not authoritative. Later
	// changes reach the agent as their own messages.
	keys []string
}

// New returns the session of a stream that opened with in.Hello, with the
// initial difference queued: upserts for works whose version the agent does
// not hold (sorted by key), then deletes for held keys in in.Gone, then
// SyncDone, then a StatusRequest for current works whose reported status
// digest the hub lacks.
func New(in Input) *Session {
	s := &Session{state: make(map[string]workState, len(in.Desired))}
	same := sameHub(in.HubIdentity, in.Hello)
	if !in.NotAuthoritative {
		s.keys = make([]string, 0, len(in.Desired))
	}
	if same {
		for _, h := range in.Hello.GetHeldWorks() {
			s.set(h.GetWorkKey(), workState{held: h.GetVersion(), flags: isHeld})
		}
	}
	for _, w := range sortedWorks(in.Desired) {
		s.setDesired(w.GetWorkKey(), w)
		if s.keys != nil {
			s.keys = append(s.keys, w.GetWorkKey())
		}
		if s.state[w.GetWorkKey()].held != w.GetVersion() {
			s.queue.Push(w.GetWorkKey(), op{work: w})
		}
	}
	for _, k := range in.Withheld {
		if st := s.state[k]; s.keys != nil && st.flags&isHeld != 0 && st.desired == nil {
			s.keys = append(s.keys, k)
		}
	}
	for _, g := range sortedChanges(in.Gone) {
		st := s.state[g.Key]
		switch {
		case st.flags&isHeld == 0 || g.Work != nil || st.desired != nil:
		case g.Keep:
			if s.keys != nil {
				s.keys = append(s.keys, g.Key)
			}
		default:
			s.queue.Push(g.Key, op{policy: g.Policy, reason: g.Reason})
		}
	}
	sort.Strings(s.keys)
	s.keys = slices.Compact(s.keys) // a key both withheld and vouched for (Gone) is listed once
	s.barrier = s.queue.Seq()
	if same {
		s.request = s.missingStatuses(in.Hello.GetReportedStatuses(), in.Digests)
	}
	return s
}

// DeleteCandidates returns the keys, sorted, that the agent holds from this
// hub and that are not in desired: those the hub must look up to tell which
// it positively knows are gone (Input.Gone). It is nil when the agent's
// works came from another hub identity: then nothing is deleted.
func DeleteCandidates(hubIdentity string, hello *agentv1.Hello, desired []*agentv1.WorkUpsert) []string {
	if !sameHub(hubIdentity, hello) {
		return nil
	}
	want := make(map[string]bool, len(desired))
	for _, w := range desired {
		want[w.GetWorkKey()] = true
	}
	var keys []string
	for _, h := range hello.GetHeldWorks() {
		if !want[h.GetWorkKey()] {
			keys = append(keys, h.GetWorkKey())
		}
	}
	sort.Strings(keys)
	return keys
}

func sameHub(hubIdentity string, hello *agentv1.Hello) bool {
	return hubIdentity != "" && hello.GetLastHubIdentity() == hubIdentity
}

// missingStatuses returns the keys, sorted, of the works the agent holds at
// their current version whose status digest it reported differs from the
// one the hub holds.
func (s *Session) missingStatuses(reported []*agentv1.ReportedStatus, have map[string]Digest) []string {
	var keys []string
	for _, r := range reported {
		st := s.state[r.GetWorkKey()]
		w := st.desired
		if w == nil || r.GetVersion() != w.GetVersion() || st.held != w.GetVersion() {
			continue // the agent will report again after applying the new version
		}
		if have[r.GetWorkKey()] != (Digest{Version: r.GetVersion(), Digest: r.GetStatusDigest()}) {
			keys = append(keys, r.GetWorkKey())
		}
	}
	sort.Strings(keys)
	return keys
}

// Apply records changes to the cluster's works and queues what the agent
// needs to hear of them. Changes to the same key coalesce with what is
// queued for it.
func (s *Session) Apply(changes ...Change) {
	for _, c := range changes {
		if c.Keep {
			continue // not a change
		}
		s.setDesired(c.Key, c.Work)
		if c.Work != nil {
			s.queue.Push(c.Key, op{work: c.Work})
			continue
		}
		s.queue.Push(c.Key, op{policy: c.Policy, reason: c.Reason})
	}
}

// Next returns the next message to send, and records it as sent; nil when
// there is nothing to send now.
func (s *Session) Next() *agentv1.HubMessage {
	for {
		if !s.synced {
			if seq, ok := s.queue.Peek(); !ok || seq > s.barrier {
				s.synced = true
				return s.syncDone()
			}
		}
		if s.synced && s.request != nil {
			keys := s.request
			s.request = nil
			return statusRequest(keys)
		}
		key, o, _, ok := s.queue.Pop()
		if !ok {
			return nil
		}
		if msg := s.take(key, o); msg != nil {
			return msg
		}
	}
}

// take turns a dequeued op into its message, or nil when the agent already
// has what it says.
func (s *Session) take(key string, o op) *agentv1.HubMessage {
	st := s.state[key]
	if o.work != nil {
		if st.held == o.work.GetVersion() {
			return nil
		}
		st.held = o.work.GetVersion()
		st.flags = st.flags&^deleting | isHeld | unacked
		s.set(key, st)
		return &agentv1.HubMessage{Message: &agentv1.HubMessage_WorkUpsert{WorkUpsert: o.work}}
	}
	if st.flags&isHeld == 0 {
		return nil
	}
	st.held = ""
	st.flags = st.flags&^(isHeld|unacked) | deleting
	s.set(key, st)
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_WorkDelete{
		WorkDelete: &agentv1.WorkDelete{WorkKey: key, DeletionPolicy: o.policy, Reason: o.reason},
	}}
}

// syncDone ends the initial difference: with the key set (keys) when the
// hub is authoritative, so that the agent deletes what it holds
// from this hub and the hub no longer has (removed while it was away,
// however long ago, across hub restarts).
func (s *Session) syncDone() *agentv1.HubMessage {
	sd := &agentv1.SyncDone{WorkCount: int32(s.desired), WorkKeys: s.keys, Authoritative: s.keys != nil}
	s.keys = nil
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_SyncDone{SyncDone: sd}}
}

func statusRequest(keys []string) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_StatusRequest{StatusRequest: &agentv1.StatusRequest{WorkKeys: keys}}}
}

// current reports whether version is the one of key that the hub last sent
// (or found the agent holding) and that the cluster still should hold.
func (s *Session) current(key, version string) bool {
	st := s.state[key]
	return st.flags&isHeld != 0 && st.held == version && st.desired != nil
}

// AcceptAck records a and reports whether it is current: an apply result
// for the version last sent of a work the cluster still has, or a deletion
// result for a delete sent. A false result means: discard it.
func (s *Session) AcceptAck(a *agentv1.Ack) bool {
	key := a.GetWorkKey()
	st := s.state[key]
	if a.GetResult() == agentv1.ApplyResult_APPLY_RESULT_DELETED {
		if st.flags&deleting == 0 {
			return false
		}
		st.flags &^= deleting
		s.set(key, st)
		return true
	}
	if !s.current(key, a.GetVersion()) {
		return false
	}
	if st.flags&unacked != 0 { // what is unacknowledged is held: this version
		st.flags &^= unacked
		s.set(key, st)
	}
	return true
}

// AcceptStatus reports whether r describes the version of its work that the
// hub last sent; a false result means r is stale: discard it.
func (s *Session) AcceptStatus(r *agentv1.StatusReport) bool {
	return s.current(r.GetWorkKey(), r.GetVersion())
}

// Works returns the number of works the cluster should hold.
func (s *Session) Works() int { return s.desired }

// Has reports whether key is one of the works the cluster should hold (its
// latest content came by Input.Desired or Apply, and no removal since).
func (s *Session) Has(key string) bool { return s.state[key].desired != nil }

// Pending returns the number of upserts and deletes sent and not yet
// acknowledged.
func (s *Session) Pending() int { return s.pending }

// Queued returns the number of work keys waiting to be sent.
func (s *Session) Queued() int { return s.queue.Len() }

// Synced reports whether SyncDone has been returned by Next.
func (s *Session) Synced() bool { return s.synced }

func sortedWorks(ws []*agentv1.WorkUpsert) []*agentv1.WorkUpsert {
	out := append([]*agentv1.WorkUpsert(nil), ws...)
	sort.Slice(out, func(i, j int) bool { return out[i].GetWorkKey() < out[j].GetWorkKey() })
	return out
}

func sortedChanges(cs []Change) []Change {
	out := append([]Change(nil), cs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
