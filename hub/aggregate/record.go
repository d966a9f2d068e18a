package aggregate

import (
	"encoding/json"
	"fmt"
	"slices"
	"unique"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/proto"

	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/store"
)

// maxRelayedBytes bounds one relayed ack or status report, protobuf
// bytes: a report keeps only the template's manifest (at most
// agentapi.MaxStatusJSONBytes of status and agentapi.MaxManifestMessageBytes
// of message), an ack no per-object results and a message cut to
// agentapi.MaxManifestMessageBytes, so 96 KiB leaves room for names and
// digests. A stored record (both, base64) stays near 256 KiB, well under
// etcd's default 1.5 MiB request limit.
const maxRelayedBytes = 96 << 10

// held is what the hub holds for one work in one cluster: its
// Observation (obs) plus what orders the updates of it (see merge).
type held struct {
	// c is what was last acked and reported (content), shared; zero
	// when nothing is held.
	c unique.Handle[content]
	// ackOrd, reportOrd, latestOrd: the receipt orders (update.ord) of
	// the ack, the report and the newest update (of version latest).
	ackOrd, reportOrd, latestOrd int64
	// since is the store revision the receiving replica had seen (Seen)
	// when latest was first received: no version rendered from a binding
	// written later can have been.
	since int64
	old   []superseded // superseded versions, oldest first
}

// superseded is a version a work moved past, with its since (held.since).
type superseded struct {
	version string
	since   int64
}

// heldOf is what is held of o, with no receipt orders.
func heldOf(o Observation) held {
	c := content{latest: o.Latest}
	if o.Ack != nil {
		c.holdAck(o.Ack)
	}
	if o.Report != nil {
		c.holdReport(o.Report)
	}
	var h held
	h.setContent(c)
	return h
}

// obs is the Observation h holds of work key.
func (h held) obs(key string) Observation {
	c := h.content()
	return Observation{Ack: c.ackProto(key), Report: c.reportProto(key), Latest: c.latest}
}

// stored is the value of store.ReportKey(cluster, work key).
//
// The receipt orders are stored under names of their own: a record
// written when updates were ordered by wall clock (ackAt, reportAt,
// latestAt, Unix µs) reads as ordered before any update received now.
type stored struct {
	Ack       []byte   `json:"ack,omitempty"`    // agentv1.Ack, protobuf
	AckOrd    int64    `json:"ackOrd,omitempty"` // update.ord
	Report    []byte   `json:"report,omitempty"` // agentv1.StatusReport, protobuf
	ReportOrd int64    `json:"reportOrd,omitempty"`
	Latest    string   `json:"latest"`
	LatestOrd int64    `json:"latestOrd,omitempty"`
	Since     int64    `json:"since,omitempty"`
	Old       []string `json:"old,omitempty"`
	OldSince  []int64  `json:"oldSince,omitempty"`
	// Replica names the replica that wrote it last, for operators.
	Replica string `json:"replica,omitempty"`
}

// encodeHeld returns the stored form of h, held of work key.
func encodeHeld(h held, key, replica string) ([]byte, error) {
	c := h.content()
	s := stored{AckOrd: h.ackOrd, ReportOrd: h.reportOrd, Latest: c.latest, LatestOrd: h.latestOrd, Since: h.since, Replica: replica}
	for _, o := range h.old {
		s.Old, s.OldSince = append(s.Old, o.version), append(s.OldSince, o.since)
	}
	var err error
	if a := c.ackProto(key); a != nil {
		if s.Ack, err = proto.Marshal(a); err != nil {
			return nil, fmt.Errorf("encode ack: %w", err)
		}
	}
	if r := c.reportProto(key); r != nil {
		if s.Report, err = proto.Marshal(r); err != nil {
			return nil, fmt.Errorf("encode status report: %w", err)
		}
	}
	return json.Marshal(s)
}

// decodeHeld reads a stored record. A report in it is validated again, as
// at the protocol boundary: the store is not trusted more than an agent.
func decodeHeld(data []byte) (held, error) {
	var s stored
	if err := json.Unmarshal(data, &s); err != nil {
		return held{}, fmt.Errorf("decode relayed report: %w", err)
	}
	h := held{ackOrd: s.AckOrd, reportOrd: s.ReportOrd, latestOrd: s.LatestOrd, since: s.Since}
	c := content{latest: s.Latest}
	for i := max(len(s.Old)-maxOldVersions, 0); i < len(s.Old); i++ {
		o := superseded{version: s.Old[i]} // since 0 when written before stamps were: known before any binding
		if len(s.OldSince) == len(s.Old) {
			o.since = s.OldSince[i]
		}
		h.old = append(h.old, o)
	}
	if s.Ack != nil {
		var a agentv1.Ack
		if err := proto.Unmarshal(s.Ack, &a); err != nil {
			return held{}, fmt.Errorf("decode relayed ack: %w", err)
		}
		c.holdAck(&a)
	}
	if s.Report != nil {
		var r agentv1.StatusReport
		if err := proto.Unmarshal(s.Report, &r); err != nil {
			return held{}, fmt.Errorf("decode relayed status report: %w", err)
		}
		if err := agentapi.ValidateStatusReport(&r); err != nil {
			return held{}, err
		}
		c.holdReport(&r)
	}
	h.setContent(c)
	return h, nil
}

// update is one ack, status report or deletion received on this replica.
type update struct {
	// ord orders the updates of a cluster, without clocks: the store
	// revision the receiving replica had seen (Seen) shifted left by
	// ordShift, raised past every order that replica gave before and
	// every order it holds of the cluster (Aggregator.nextOrdLocked).
	ord    int64
	seen   int64 // the store revision the receiving replica had seen then (Seen)
	ack    *agentv1.Ack
	report *agentv1.StatusReport
	gone   bool // an ack of the deletion: the work is forgotten
}

func (u update) version() string {
	if u.report != nil {
		return u.report.GetVersion()
	}
	return u.ack.GetVersion()
}

// merge applies u to h (ok false: h holds nothing). It returns what to
// hold and whether anything changed: an update is discarded when its
// version is one the work already moved past, when an update of another
// version was received after it, or when an ack (report) received after it
// is held. "After" compares receipt orders (update.ord), never clocks:
// on one replica they are the order of receipt; of two replicas (the
// cluster's stream moved between them while one had not written yet) the
// update received by the replica that had seen more of the store, or
// that held the other's record, is the newer; of two that tie (neither
// replica had seen the other's update nor any later write), the one
// written first stays: the other is the late write of a replica that
// had not written yet when the stream moved. The agent's next update of
// the work, ordered after what its replica holds, settles it either way.
// A deletion forgets the work (exists false) unless a newer update is held.
// An update that changes nothing held (an agent repeating an ack or report
// the hub holds) is not a change: it is neither written nor flushed.
func merge(h held, ok bool, u update) (out held, exists, changed bool) {
	out, exists, changed = mergeAny(h, ok, u)
	if ok && exists && changed && out.c == h.c && out.since == h.since {
		return h, true, false
	}
	return out, exists, changed
}

// mergeAny is merge, counting an update that holds what is held already
// as a change.
func mergeAny(h held, ok bool, u update) (out held, exists, changed bool) {
	if u.gone {
		if ok && u.ord <= h.latestOrd {
			return h, true, false
		}
		return held{}, false, ok
	}
	v := u.version()
	if !ok {
		h = held{}
	}
	c := h.content()
	switch {
	case !ok:
	case slices.ContainsFunc(h.old, func(o superseded) bool { return o.version == v }),
		v != c.latest && u.ord <= h.latestOrd,
		u.ack != nil && c.ack.ok && u.ord <= h.ackOrd,
		u.report != nil && c.report.ok && u.ord <= h.reportOrd:
		return h, true, false
	}
	h.old = slices.Clone(h.old)
	switch {
	case c.latest == "":
		h.since = u.seen
	case c.latest != v:
		h.old = append(h.old, superseded{version: c.latest, since: h.since})
		if len(h.old) > maxOldVersions {
			h.old = h.old[1:]
		}
		h.since = u.seen
	default:
		h.since = min(h.since, u.seen)
	}
	c.latest = v
	h.latestOrd = max(h.latestOrd, u.ord)
	if u.ack != nil {
		c.holdAck(u.ack)
		h.ackOrd = u.ord
	} else {
		c.holdReport(u.report)
		h.reportOrd = u.ord
	}
	h.setContent(c)
	return h, true, true
}

// versionAt is the version h held when the store was at revision rev:
// the newest one first received while the receiving replica had seen
// less than rev; "" when none was.
func (h held) versionAt(rev int64) string {
	if latest := h.content().latest; latest == "" || h.since < rev {
		return latest
	}
	for i := len(h.old) - 1; i >= 0; i-- {
		if h.old[i].since < rev {
			return h.old[i].version
		}
	}
	return ""
}

// delta is what this replica received for one work since its last
// write, coalesced without changing what fold makes of it: the updates
// after the last deletion, in the order received, keeping per run of one
// version only its last ack and its last report, and dropping an update of
// a version a later run superseded (merge would discard it). At most
// maxOldVersions+1 runs are kept: older ones could only add to the
// superseded versions, which hold no more than that.
type delta struct {
	seq   []update
	bytes int // protobuf size of the acks and reports in seq, for the queue's bound
}

// add records u, coalescing it with what it supersedes.
func (d *delta) add(u update) {
	if u.gone {
		d.seq, d.bytes = []update{u}, 0
		return
	}
	runs := d.runs()
	v := u.version()
	if i := slices.Index(runs, v); i >= 0 && i < len(runs)-1 {
		return // superseded within d: merge would discard it
	}
	seq := slices.Clone(d.seq)
	if len(runs) > 0 && runs[len(runs)-1] == v {
		seq = slices.DeleteFunc(seq, func(o update) bool {
			same := !o.gone && o.version() == v && (o.ack != nil) == (u.ack != nil)
			if same {
				u.seen = min(u.seen, o.seen) // when v was first received (held.since)
			}
			return same
		})
	}
	seq = append(seq, u)
	if len(runs) == maxOldVersions+1 && runs[len(runs)-1] != v {
		first := runs[0]
		seq = slices.DeleteFunc(seq, func(o update) bool { return !o.gone && o.version() == first })
	}
	d.seq, d.bytes = seq, 0
	for _, o := range seq {
		d.bytes += o.size()
	}
}

// runs returns the versions of d's updates, each once, in order.
func (d *delta) runs() []string {
	var out []string
	for _, u := range d.seq {
		if u.gone {
			continue
		}
		if v := u.version(); len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

// then returns d followed by the newer n.
func (d *delta) then(n *delta) *delta {
	out := *d
	for _, u := range n.seq {
		out.add(u)
	}
	return &out
}

// fold merges d's updates onto h in order.
func (d *delta) fold(h held, ok bool) (out held, exists, changed bool) {
	for _, u := range d.seq {
		var c bool
		h, ok, c = merge(h, ok, u)
		changed = changed || c
	}
	return h, ok, changed
}

func (u update) size() int {
	if u.ack != nil {
		return proto.Size(u.ack)
	}
	return proto.Size(u.report)
}

// trimAck is what is held and relayed of an ack: the aggregator reads
// its work key, version, result and message; per-object results stay on
// the stream. Repeated strings are shared (in).
func trimAck(a *agentv1.Ack, in *interner) *agentv1.Ack {
	msg := a.GetMessage()
	if len(msg) > agentapi.MaxManifestMessageBytes {
		msg = msg[:agentapi.MaxManifestMessageBytes]
	}
	return &agentv1.Ack{WorkKey: in.get(a.GetWorkKey()), Version: in.get(a.GetVersion()), Result: a.GetResult(), Message: msg}
}

// trimReport is what is held and relayed of a status report: its work
// key, version and digest and the template's manifest (what
// templateManifest picks), or none. Repeated strings are shared (in).
func trimReport(r *agentv1.StatusReport, ref store.ObjectRef, in *interner) *agentv1.StatusReport {
	out := &agentv1.StatusReport{WorkKey: in.get(r.GetWorkKey()), Version: in.get(r.GetVersion()), Digest: in.get(r.GetDigest())}
	ms := r.GetManifests()
	for _, m := range ms {
		id := m.GetIdentity()
		if id.GetGroup() == ref.Group && id.GetKind() == ref.Kind && id.GetNamespace() == ref.Namespace && id.GetName() == ref.Name {
			out.Manifests = []*agentv1.ManifestStatus{trimManifest(m, in)}
			return out
		}
	}
	if len(ms) == 1 {
		out.Manifests = []*agentv1.ManifestStatus{trimManifest(ms[0], in)}
	}
	return out
}

// trimManifest copies what items are built from of the manifest picked:
// not its identity (a report held has one manifest, and templateManifest
// takes the only one). Its status is shared (in): it is never modified.
func trimManifest(m *agentv1.ManifestStatus, in *interner) *agentv1.ManifestStatus {
	return &agentv1.ManifestStatus{StatusJson: in.bytes(m.GetStatusJson()), Health: m.GetHealth(), Applied: m.GetApplied(), Message: m.GetMessage()}
}
