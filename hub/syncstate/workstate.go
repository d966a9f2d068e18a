package syncstate

import agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"

// workState is what a session knows of one work key. Sessions keep one map
// of them, not one map per fact: a hub holds a session per agent and each
// knows every work of its cluster, so a map per fact multiplied the room of
// every key by the number of facts.
type workState struct {
	desired *agentv1.WorkUpsert // the cluster's latest content; nil: not desired
	// held is the version the agent holds from this hub identity, as far as
	// the hub knows; "" unless flags has isHeld, so that comparing it with
	// a version reads as the old key → version map did.
	held  string
	flags uint8 // isHeld, unacked, deleting
}

// The flags of a workState.
const (
	// isHeld: the agent holds held from this hub identity (Hello's works if
	// its identity is this hub's, then every upsert sent).
	isHeld uint8 = 1 << iota
	// unacked: the upsert of held was sent and not acknowledged. Only with
	// isHeld: an upsert sets both, a delete clears both.
	unacked
	// deleting: a delete was sent and not acknowledged. Never with isHeld:
	// a delete clears it, an upsert sets it.
	deleting
)

// dead reports whether st says nothing worth keeping: the cluster does not
// want the work, the agent does not hold it and no delete awaits its ack.
func (st workState) dead() bool {
	return st.desired == nil && st.flags&(isHeld|deleting) == 0
}

// counts returns what st adds to Works and to Pending.
func (st workState) counts() (desired, pending int) {
	if st.desired != nil {
		desired = 1
	}
	if st.flags&(unacked|deleting) != 0 {
		pending = 1 // unacked and deleting never go together
	}
	return desired, pending
}

// set records st as key's state and keeps Works' and Pending's counters, so
// that both stay O(1). A dead state forgets key, and the last key forgotten
// renews the map (see renew).
func (s *Session) set(key string, st workState) {
	old, ok := s.state[key]
	oldDesired, oldPending := old.counts()
	newDesired, newPending := st.counts()
	s.desired += newDesired - oldDesired
	s.pending += newPending - oldPending
	if !st.dead() {
		s.state[ownKey(key, st)] = st
		return
	}
	if ok {
		delete(s.state, key)
		s.renew()
	}
}

// ownKey is key as the session's own work holds it, when it has one: an
// assignment to a map stores the key it is given (Go replaces a string
// key's bytes on every assignment), and a key from an agent's ack is the
// ack's own allocation, which the map would then keep alive, one per work
// acknowledged.
func ownKey(key string, st workState) string {
	if w := st.desired; w != nil && w.GetWorkKey() == key {
		return w.GetWorkKey()
	}
	return key
}

// setDesired records w as key's latest content; nil: the cluster no longer
// wants it.
func (s *Session) setDesired(key string, w *agentv1.WorkUpsert) {
	st := s.state[key]
	st.desired = w
	s.set(key, st)
}

// renew replaces the map of states with a new one when it is empty: a map
// keeps the room of the most entries it had, and a cluster that lost its
// 1,000 works (evicted, or all of its works deleted) would keep room for
// them as long as its agent stays connected.
func (s *Session) renew() {
	if len(s.state) == 0 {
		s.state = make(map[string]workState)
	}
}
