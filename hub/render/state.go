package render

import (
	"slices"
	"sort"
	"sync"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// state is what the renderer publishes: every cluster's works and the
// rendered contents they share. Run's goroutine writes everything under mu
// and may read refs, contents, unsure and readyDone without it, being
// their only writer. Current, Changes, Gone and Authoritative read under mu, and create empty
// entries of clusters, so the map clusters is read under mu by everyone.
type state struct {
	mu sync.Mutex // guards every field below

	// rev is the revision of the last commit; every commit adds one.
	rev int64
	// ready is closed by the first commit: the initial load is published.
	ready     chan struct{}
	readyDone bool

	// contents are the rendered works by version, shared by every
	// cluster that holds that version.
	contents map[string]*content
	clusters map[string]*clusterWorks
	// refs are the published works by work key.
	refs map[string]*refState

	// unsure are the work keys that did not render (their render failed
	// or panicked, or their inputs do not decode) with where they may be
	// held; unsureOn counts them per cluster, unsureAny those that may be
	// held anywhere (unsure.go).
	unsure    map[string]*reach
	unsureOn  map[string]int
	unsureAny int

	// retention and maxRemoved bound how long and how many removals each
	// cluster remembers (Config.RemovedRetention, Config.MaxRemoved).
	retention  time.Duration
	maxRemoved int

	// stamp is the store revision the renderer has applied the events of,
	// set by its loop before a commit: new content gets it as its
	// WorkUpsert.StoreRevision. Only the loop reads and writes it.
	stamp int64
}

// content is one rendered work and the number of (cluster, key) holding it.
type content struct {
	up      *agentv1.WorkUpsert
	holders int
	bytes   int
}

// refState is one work key as published.
type refState struct {
	// policy is the deletion policy of the work's binding, last known.
	policy agentv1.DeletionPolicy
	// vouch are the clusters the work belongs to now (targets, retained
	// evictions and suspensions); Gone vouches for the others. Nil:
	// Gone vouches for nothing.
	vouch clusterSet
	// evicting are the clusters the binding is gracefully leaving: when
	// one of them loses the work, the reason is FAILOVER.
	evicting map[string]bool
	// placed are the clusters holding a version of the work. placed and
	// vouch are never changed in place (they may be one slice).
	placed clusterSet
}

// clusterWorks is one cluster's works and the history Changes reads.
type clusterWorks struct {
	works   map[string]heldWork // work key → version held
	removed map[string]removal  // removed work keys still remembered
	// log lists changes in revision order; an entry is live when it is
	// the last change of its key (last; older entries are skipped, then
	// compacted).
	log []logEntry
	// removals lists removals in revision order, for trimming.
	removals []logEntry
	// floor is the oldest revision Changes can answer from: every change
	// after it is still in log.
	floor int64
	// wake is closed and replaced on every change of the cluster.
	wake chan struct{}
}

// clusterSet is a set of cluster names, sorted: a sixth of the memory of
// a map of them (a work of a binding placed on 1,000 clusters vouches for
// 1,000). Nil and empty differ as a nil map and an empty one do.
type clusterSet []string

// newClusterSet returns the set of m's keys: nil when m is nil.
func newClusterSet(m map[string]bool) clusterSet {
	if m == nil {
		return nil
	}
	s := make(clusterSet, 0, len(m))
	for c := range m {
		s = append(s, c)
	}
	slices.Sort(s)
	return s
}

func (s clusterSet) has(cluster string) bool {
	_, ok := slices.BinarySearch(s, cluster)
	return ok
}

// updated returns s with add's keys and without drop: s itself when that
// changes nothing (a new version for the same clusters), else a new set.
func (s clusterSet) updated(add map[string]*agentv1.WorkUpsert, drop []string) clusterSet {
	var added []string
	for c := range add {
		if !s.has(c) {
			added = append(added, c)
		}
	}
	if len(added) == 0 && !slices.ContainsFunc(drop, s.has) {
		return s
	}
	out := append(slices.Clone(s), added...)
	slices.Sort(out)
	if len(drop) == 0 {
		return out
	}
	gone := clusterSet(slices.Clone(drop))
	slices.Sort(gone)
	return slices.DeleteFunc(out, gone.has)
}

// heldWork is a work a cluster holds: its version and the revision of
// its last change.
type heldWork struct {
	version string
	rev     int64
}

type removal struct {
	policy agentv1.DeletionPolicy
	reason agentv1.DeleteReason
	rev    int64
	at     time.Time
}

type logEntry struct {
	rev int64
	key string
}

func newState(retention time.Duration, maxRemoved int) *state {
	return &state{
		ready:      make(chan struct{}),
		contents:   map[string]*content{},
		clusters:   map[string]*clusterWorks{},
		refs:       map[string]*refState{},
		unsure:     map[string]*reach{},
		unsureOn:   map[string]int{},
		retention:  retention,
		maxRemoved: maxRemoved,
	}
}

// cluster returns the cluster's works, creating them empty with history
// from revision floor; mu held.
func (s *state) cluster(name string, floor int64) *clusterWorks {
	cw := s.clusters[name]
	if cw == nil {
		cw = &clusterWorks{works: map[string]heldWork{}, removed: map[string]removal{},
			floor: floor, wake: make(chan struct{})}
		s.clusters[name] = cw
	}
	return cw
}

func (s *state) hold(up *agentv1.WorkUpsert) {
	if c, ok := s.contents[up.GetVersion()]; ok {
		c.holders++
		return
	}
	if up.StoreRevision == 0 {
		// New content, not yet shared: stamped with the store revision
		// the renderer had applied when it rendered it (Hello's lineage).
		up.StoreRevision = s.stamp
	}
	n := 0
	for _, m := range up.GetManifests() {
		n += len(m)
	}
	s.contents[up.GetVersion()] = &content{up: up, holders: 1, bytes: n}
}

func (s *state) release(version string) {
	c := s.contents[version]
	if c == nil {
		return
	}
	if c.holders--; c.holders <= 0 {
		delete(s.contents, version)
	}
}

// record appends a change of key at rev, which works or removed hold.
func (cw *clusterWorks) record(rev int64, key string) {
	cw.log = append(cw.log, logEntry{rev: rev, key: key})
}

// last returns the revision of key's last change still remembered: the
// work held, or its removal; 0 when neither.
func (cw *clusterWorks) last(key string) int64 {
	if w, ok := cw.works[key]; ok {
		return w.rev
	}
	return cw.removed[key].rev
}

// since returns the keys changed after rev, oldest change first, each
// once.
func (cw *clusterWorks) since(rev int64) []string {
	i := sort.Search(len(cw.log), func(i int) bool { return cw.log[i].rev > rev })
	var keys []string
	for _, e := range cw.log[i:] {
		if cw.last(e.key) == e.rev {
			keys = append(keys, e.key)
		}
	}
	return keys
}

// trim forgets removals beyond retention or maxRemoved (raising floor past
// them) and compacts the log once most of it is superseded.
func (cw *clusterWorks) trim(now time.Time, retention time.Duration, maxRemoved int) {
	for len(cw.removals) > 0 {
		e := cw.removals[0]
		r, ok := cw.removed[e.key]
		if ok && r.rev == e.rev && now.Sub(r.at) < retention && len(cw.removed) <= maxRemoved {
			break
		}
		cw.removals = cw.removals[1:]
		if ok && r.rev == e.rev {
			delete(cw.removed, e.key)
			cw.floor = max(cw.floor, e.rev)
		}
	}
	if n := len(cw.works) + len(cw.removed); len(cw.log) > 2*n+logSlack {
		live := make([]logEntry, 0, n)
		for _, e := range cw.log {
			if cw.last(e.key) == e.rev {
				live = append(live, e)
			}
		}
		cw.log = live
	}
}

// logSlack is how many superseded log entries a cluster may carry beyond
// its live ones before the log is compacted.
const logSlack = 1024
