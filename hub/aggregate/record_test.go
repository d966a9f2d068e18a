package aggregate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/store"
)

func ackU(at int64, version string) update {
	return update{ord: at, ack: &agentv1.Ack{WorkKey: workKey, Version: version, Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}}
}

func reportU(at int64, version, digest string) update {
	return update{ord: at, report: &agentv1.StatusReport{WorkKey: workKey, Version: version, Digest: digest}}
}

func goneU(at int64) update { return update{ord: at, gone: true} }

// summary is what a test compares of a held record.
type summary struct {
	exists              bool
	latest, ack, report string // versions; report also "@digest"
	old                 string
}

func summarize(h held, exists bool) summary {
	if !exists {
		return summary{}
	}
	s := summary{exists: true, latest: h.obs(workKey).Latest, ack: h.obs(workKey).Ack.GetVersion()}
	if h.obs(workKey).Report != nil {
		s.report = h.obs(workKey).Report.GetVersion() + "@" + h.obs(workKey).Report.GetDigest()
	}
	for i, o := range h.old {
		if i > 0 {
			s.old += ","
		}
		s.old += o.version
	}
	return s
}

// TestMerge: the order rules of relayed updates, including those of two
// replicas (stamps interleaved with what is stored).
func TestMerge(t *testing.T) {
	stored := func(us ...update) (held, bool) {
		var h held
		ok := false
		for _, u := range us {
			h, ok, _ = merge(h, ok, u)
		}
		return h, ok
	}
	tests := []struct {
		name        string
		base        []update
		u           update
		want        summary
		wantChanged bool
	}{
		{"first report", nil, reportU(10, "v1", "d1"), summary{exists: true, latest: "v1", report: "v1@d1"}, true},
		{"ack of a new version supersedes", []update{reportU(10, "v1", "d1")}, ackU(20, "v2"),
			summary{exists: true, latest: "v2", ack: "v2", report: "v1@d1", old: "v1"}, true},
		{"late report of a superseded version", []update{reportU(10, "v1", "d1"), ackU(20, "v2")}, reportU(30, "v1", "d9"),
			summary{exists: true, latest: "v2", ack: "v2", report: "v1@d1", old: "v1"}, false},
		{"another replica's older update of another version", []update{ackU(20, "v2")}, reportU(15, "v1", "d1"),
			summary{exists: true, latest: "v2", ack: "v2"}, false},
		{"another replica's older report of the same version", []update{reportU(20, "v2", "new")}, reportU(15, "v2", "old"),
			summary{exists: true, latest: "v2", report: "v2@new"}, false},
		{"another replica's report tied with the stored one", []update{reportU(20, "v2", "first")}, reportU(20, "v2", "late"),
			summary{exists: true, latest: "v2", report: "v2@first"}, false},
		{"an older ack after a newer report of its version", []update{reportU(20, "v2", "d")}, ackU(15, "v2"),
			summary{exists: true, latest: "v2", ack: "v2", report: "v2@d"}, true},
		{"deletion forgets", []update{reportU(10, "v1", "d1")}, goneU(20), summary{}, true},
		{"older deletion kept out", []update{reportU(20, "v1", "d1")}, goneU(10), summary{exists: true, latest: "v1", report: "v1@d1"}, false},
		{"deletion of nothing", nil, goneU(10), summary{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ok := stored(tt.base...)
			got, exists, changed := merge(h, ok, tt.u)
			if s := summarize(got, exists); s != tt.want || changed != tt.wantChanged {
				t.Errorf("merge = %+v, changed %v; want %+v, changed %v", s, changed, tt.want, tt.wantChanged)
			}
		})
	}
}

// TestDeltaKeepsWhenFirstSeen: coalescing two reports of one version
// keeps the store revision the first arrived at, as merging both would.
func TestDeltaKeepsWhenFirstSeen(t *testing.T) {
	first, second := reportU(1, "v1", "a"), reportU(2, "v1", "b")
	first.seen, second.seen = 5, 9
	var d delta
	d.add(first)
	d.add(second)
	h, _, _ := d.fold(held{}, false)
	if len(d.seq) != 1 || h.since != 5 || h.versionAt(6) != "v1" {
		t.Errorf("coalesced to %d updates, since %d, versionAt(6) %q; want 1, 5, v1 (first received at seen 5)", len(d.seq), h.since, h.versionAt(6))
	}
}

// TestDeltaCoalesces: a burst of updates coalesces into few, and folding
// the coalesced delta gives what merging every update in turn gives.
func TestDeltaCoalesces(t *testing.T) {
	tests := []struct {
		name    string
		base    []update
		us      []update
		wantLen int
	}{
		{"reports of one version", nil, []update{reportU(1, "v1", "a"), reportU(2, "v1", "b"), reportU(3, "v1", "c")}, 1},
		{"ack and report", nil, []update{ackU(1, "v1"), reportU(2, "v1", "a"), ackU(3, "v1"), reportU(4, "v1", "b")}, 2},
		{"late report of a superseded version", nil, []update{reportU(1, "v1", "a"), ackU(2, "v2"), reportU(3, "v1", "late")}, 2},
		{"deletion then a new version", []update{reportU(0, "v1", "a")}, []update{reportU(1, "v1", "b"), goneU(2), ackU(3, "v3")}, 2},
		{"many versions", nil, []update{ackU(1, "v1"), ackU(2, "v2"), ackU(3, "v3"), ackU(4, "v4"), ackU(5, "v5"), ackU(6, "v6"), ackU(7, "v7"), reportU(8, "v7", "x")}, maxOldVersions + 2},
		{"on a record another replica wrote later", []update{ackU(5, "v2")}, []update{reportU(1, "v1", "a"), reportU(2, "v1", "b")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var base held
			ok := false
			for _, u := range tt.base {
				base, ok, _ = merge(base, ok, u)
			}
			want, wantOK := base, ok
			var wantChanged bool
			d := &delta{}
			for _, u := range tt.us {
				var c bool
				want, wantOK, c = merge(want, wantOK, u)
				wantChanged = wantChanged || c
				d.add(u)
			}
			got, gotOK, changed := d.fold(base, ok)
			if summarize(got, gotOK) != summarize(want, wantOK) || changed != wantChanged {
				t.Errorf("fold = %+v (changed %v); merging each gives %+v (changed %v)", summarize(got, gotOK), changed, summarize(want, wantOK), wantChanged)
			}
			if len(d.seq) != tt.wantLen {
				t.Errorf("coalesced to %d updates; want %d", len(d.seq), tt.wantLen)
			}
		})
	}
}

// TestHeldRoundTrip: a record decodes to what was encoded; a stored
// report that fails validation is refused.
func TestHeldRoundTrip(t *testing.T) {
	first, second := reportU(10, "v1", "d1"), ackU(20, "v2")
	first.seen, second.seen = 5, 7
	h, _, _ := merge(held{}, false, first)
	h, _, _ = merge(h, true, second)
	data, err := encodeHeld(h, workKey, "replica-1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeHeld(data)
	if err != nil {
		t.Fatalf("decodeHeld: %v", err)
	}
	if summarize(got, true) != summarize(h, true) || got.ackOrd != 20 || got.reportOrd != 10 || got.latestOrd != 20 {
		t.Errorf("decoded %+v; want %+v", got, h)
	}
	for rev, want := range map[int64]string{5: "", 6: "v1", 7: "v1", 8: "v2"} {
		if v := got.versionAt(rev); v != want {
			t.Errorf("decoded versionAt(%d) = %q; want %q (v1 received at seen 5, v2 at 7)", rev, v, want)
		}
	}
	bad, _, _ := merge(held{}, false, update{ord: 1, report: report("v1", manifest("web", agentv1.Health_HEALTH_HEALTHY, true, `{"x":`))})
	data, err = encodeHeld(bad, workKey, "replica-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeHeld(data); err == nil {
		t.Error("decodeHeld(record with invalid status JSON) = nil error; want refused")
	}
}

// TestTrimReport: only the template's manifest is relayed, or the only
// manifest, or none.
func TestTrimReport(t *testing.T) {
	ref := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}
	dep := manifest("web", agentv1.Health_HEALTH_HEALTHY, true, `"web"`)
	other := &agentv1.ManifestStatus{Identity: &agentv1.ObjectIdentity{Kind: "ConfigMap", Namespace: "prod", Name: "cfg"}, StatusJson: []byte(`"cfg"`)}
	tests := []struct {
		name string
		ms   []*agentv1.ManifestStatus
		want string
	}{
		{"template among others", []*agentv1.ManifestStatus{other, dep}, "web"},
		{"only manifest", []*agentv1.ManifestStatus{other}, "cfg"},
		{"none is the template", []*agentv1.ManifestStatus{other, other}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := trimReport(report("v1", tt.ms...), ref, &interner{})
			name := ""
			if len(got.GetManifests()) == 1 {
				name = strings.Trim(string(got.GetManifests()[0].GetStatusJson()), `"`) // held without its identity
			}
			if name != tt.want || len(got.GetManifests()) > 1 || got.GetDigest() != "d-v1" {
				t.Errorf("trimReport = %v; want manifest %q only", got, tt.want)
			}
		})
	}
}

// withOrd is h received at receipt order at (its report and its latest).
func withOrd(h held, at int64) held {
	h.reportOrd, h.latestOrd = at, at
	return h
}

// TestDecodeHeldOldVersions: a stored record keeps at most maxOldVersions
// superseded versions, the newest, each with its since; one written before
// the sinces were stored gets 0 for each.
func TestDecodeHeldOldVersions(t *testing.T) {
	var versions []string
	var sinces []int64
	for i := range maxOldVersions + 2 {
		versions, sinces = append(versions, fmt.Sprintf("v%d", i)), append(sinces, int64(10*i))
	}
	for _, tt := range []struct {
		name   string
		sinces []int64
		want   func(i int) int64
	}{
		{"with sinces", sinces, func(i int) int64 { return int64(10 * i) }},
		{"written before sinces", nil, func(int) int64 { return 0 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(stored{Latest: "v9", Old: versions, OldSince: tt.sinces})
			if err != nil {
				t.Fatal(err)
			}
			h, err := decodeHeld(data)
			if err != nil {
				t.Fatal(err)
			}
			var want []superseded
			for i := 2; i < len(versions); i++ {
				want = append(want, superseded{version: versions[i], since: tt.want(i)})
			}
			if !slices.Equal(h.old, want) {
				t.Errorf("decoded old versions %v; want %v", h.old, want)
			}
		})
	}
}

// TestMessagesMerged: the messages of a failed apply and of an unhealthy
// manifest come back in the Observation, a later applied ack clears the
// ack's, and merging into a held value leaves the value it was merged
// from as it was.
func TestMessagesMerged(t *testing.T) {
	h, _, _ := merge(held{}, false, ackU(10, "v1"))
	failed := update{ord: 20, ack: &agentv1.Ack{WorkKey: workKey, Version: "v1", Result: agentv1.ApplyResult_APPLY_RESULT_FAILED, Message: "quota exceeded"}}
	h2, _, _ := merge(h, true, failed)
	unhealthy := update{ord: 30, report: &agentv1.StatusReport{WorkKey: workKey, Version: "v1", Digest: "d",
		Manifests: []*agentv1.ManifestStatus{{Health: agentv1.Health_HEALTH_UNHEALTHY, Message: "crash loop"}}}}
	h3, _, _ := merge(h2, true, unhealthy)
	o := h3.obs(workKey)
	if o.Ack.GetMessage() != "quota exceeded" || o.Report.GetManifests()[0].GetMessage() != "crash loop" {
		t.Errorf("observation after a failed ack and an unhealthy report: ack message %q, manifest message %q; want both",
			o.Ack.GetMessage(), o.Report.GetManifests()[0].GetMessage())
	}
	if h.obs(workKey).Ack.GetMessage() != "" || h2.obs(workKey).Report != nil {
		t.Errorf("merging changed the values merged from: first %v, second %v", h.obs(workKey), h2.obs(workKey))
	}
	h4, _, _ := merge(h3, true, ackU(40, "v1"))
	if h4.obs(workKey).Ack.GetMessage() != "" || h3.obs(workKey).Ack.GetMessage() != "quota exceeded" {
		t.Errorf("ack messages after a later applied ack: %q (was %q); want it gone, the earlier value unchanged",
			h4.obs(workKey).Ack.GetMessage(), h3.obs(workKey).Ack.GetMessage())
	}
}

// TestContentShared: records that were acked and reported the same (a
// template Duplicated to many clusters) share what they hold, whenever
// each received it, and each record stays small (issue 16: a million of
// them for make load-million; 216 bytes each when every record held its
// own).
func TestContentShared(t *testing.T) {
	status := `{"replicas":3,"readyReplicas":3}`
	rep := func(at int64) update {
		return update{ord: at, seen: at, report: &agentv1.StatusReport{WorkKey: workKey, Version: "v1", Digest: "d1",
			Manifests: []*agentv1.ManifestStatus{{Health: agentv1.Health_HEALTH_HEALTHY, Applied: true, StatusJson: []byte(status)}}}}
	}
	var hs []held
	for i := range int64(3) {
		h, _, _ := merge(held{}, false, ackU(10+i, "v1"))
		h, _, _ = merge(h, true, rep(20+i))
		hs = append(hs, h)
	}
	for i, h := range hs[1:] {
		if h.c != hs[0].c {
			t.Errorf("record %d holds its own copy of the same ack and report; want it shared", i+1)
		}
		if h.ackOrd == hs[0].ackOrd {
			t.Fatalf("the records were meant to differ in receipt times")
		}
	}
	if got := string(hs[0].obs(workKey).Report.GetManifests()[0].GetStatusJson()); got != status {
		t.Errorf("status held %s; want %s", got, status)
	}
	if n := unsafe.Sizeof(record{}); n > 80 {
		t.Errorf("a record is %d bytes; want at most 80 (a size class of 80, not 112)", n)
	}
}

// TestObservationsShared: a flush builds one Observation for the records
// of a binding that hold the same ack and report, not one per cluster,
// and its own for a cluster that holds another.
func TestObservationsShared(t *testing.T) {
	leases := liveness.New(liveness.Config{LeaseDuration: 40 * time.Second})
	a := New(nil, nil, leases, Config{Local: true, Seen: func() int64 { return 1 }}, hclog.NewNullLogger())
	ctx := context.Background()
	for i := range 3 {
		version := "v1"
		if i == 2 {
			version = "v2"
		}
		if err := a.Ack(ctx, fmt.Sprintf("member-%d", i), &agentv1.Ack{WorkKey: workKey, Version: version, Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}); err != nil {
			t.Fatal(err)
		}
	}
	obs := a.observations(store.BindingKey(webRef))
	if len(obs) != 3 {
		t.Fatalf("%d observations, want 3", len(obs))
	}
	if obs["member-0"].Ack != obs["member-1"].Ack {
		t.Errorf("two clusters that acked the same version got an ack each; want one shared")
	}
	if obs["member-2"].Ack == obs["member-0"].Ack || obs["member-2"].Ack.GetVersion() != "v2" {
		t.Errorf("the cluster that acked v2 got %v; want its own ack of v2", obs["member-2"].Ack)
	}
}
