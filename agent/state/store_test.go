package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/testing/protocmp"
)

func work(key, version string) Work {
	return Work{
		Key: key, Version: version,
		Manifests: [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`)},
		Options:   &agentv1.ApplyOptions{DeletionPolicy: agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN},
		Binding:   &agentv1.BindingReference{Namespace: "ns", Name: "b", Uid: "u"},
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	orphan := Held{Work: work("ns/b/2", "v2"), Hub: "hub-a", OrphanedSince: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	mustDo(t, s.PutHub(context.Background(), "hub-b", Lineage{Epoch: "e1", Revision: 7}))
	mustDo(t, s.PutWork(context.Background(), Held{Work: work("ns/b/1", "v0"), Hub: "hub-b"}))
	mustDo(t, s.PutWork(context.Background(), Held{Work: work("ns/b/1", "v1"), Hub: "hub-b"})) // replaces
	mustDo(t, s.PutWork(context.Background(), orphan))
	mustDo(t, s.PutWork(context.Background(), Held{Work: work("ns/b/3", "v3"), Hub: "hub-b", Unmanaged: true}))
	mustDo(t, s.PutWork(context.Background(), Held{Work: work("gone", "v1"), Hub: "hub-b"}))
	mustDo(t, s.DeleteWork(context.Background(), "gone"))
	mustDo(t, s.DeleteWork(context.Background(), "never-held"))
	mustDo(t, s.PutDigests(context.Background(), map[string]Digest{"ns/b/1": {Version: "v1", Digest: "d"}}))
	custom := &agentv1.Customizations{Version: "c1", ResourceInterpreterCustomizations: [][]byte{[]byte(`{"kind":"ResourceInterpreterCustomization"}`)}}
	mustDo(t, s.PutCustomizations(context.Background(), &agentv1.Customizations{Version: "c0"}))
	mustDo(t, s.PutCustomizations(context.Background(), custom)) // replaces

	again, err := Open(dir) // a new agent process on the same directory
	if err != nil {
		t.Fatal(err)
	}
	got, err := again.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Snapshot{
		HubIdentity: "hub-b",
		Lineage:     Lineage{Epoch: "e1", Revision: 7},
		Works: map[string]Held{
			"ns/b/1": {Work: work("ns/b/1", "v1"), Hub: "hub-b"},
			"ns/b/2": orphan,
			"ns/b/3": {Work: work("ns/b/3", "v3"), Hub: "hub-b", Unmanaged: true},
		},
		Digests:        map[string]Digest{"ns/b/1": {Version: "v1", Digest: "d"}},
		Customizations: custom,
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("Load() mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadEmpty(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(context.Background())
	if err != nil || got.HubIdentity != "" || len(got.Works) != 0 || len(got.Digests) != 0 {
		t.Errorf("Load() of a new directory = %+v, %v; want an empty state", got, err)
	}
}

func TestLoadRemovesUnfinishedWrites(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(s.Dir(), worksDir, tempPrefix+"123")
	mustDo(t, os.WriteFile(tmp, []byte(`{"half`), 0o600))
	if _, err := s.Load(context.Background()); err != nil {
		t.Fatalf("Load() with a temporary file = %v; want it ignored", err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temporary file %s still there after Load", tmp)
	}
}

func TestCorruptFileIsAClearError(t *testing.T) {
	tests := []struct {
		name    string
		file    func(s *Store) string
		content string
	}{
		{"truncated work", workFile, `{"format_version":1,"work_key":"a","upsert":{"workK`},
		{"work with a wrong key", workFile, `{"format_version":1,"work_key":"b","hub_identity":"h","upsert":{"workKey":"b","version":"v1"}}`},
		{"work with a bad upsert", workFile, `{"format_version":1,"work_key":"a","upsert":{"manifests":"not base64!"}}`},
		{"work with a bad protobuf upsert", workFile, `{"format_version":2,"work_key":"a","upsert_proto":"//8="}`},
		{"work with a bad protobuf after its line", workFile, "{\"format_version\":3,\"work_key\":\"a\"}\n\xff\xff"},
		{"version 2 work with bytes after its JSON", workFile, "{\"format_version\":2,\"work_key\":\"a\",\"upsert_proto\":\"\"}\n\x0a\x01a"},
		{"work of a newer format", workFile, `{"format_version":4,"work_key":"a","upsert_proto":""}`},
		{"hub file of another format", func(s *Store) string { return filepath.Join(s.Dir(), hubFile) }, `{"format_version":7,"hub_identity":"h"}`},
		{"garbage digests", func(s *Store) string { return filepath.Join(s.Dir(), digestsFile) }, "\x00\x01binary"},
		{"customizations with a bad set", func(s *Store) string { return filepath.Join(s.Dir(), customizationsFile) },
			`{"format_version":1,"set":{"resourceInterpreterCustomizations":"not base64!"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			mustDo(t, s.PutWork(context.Background(), Held{Work: work("a", "v1"), Hub: "h"}))
			path := tt.file(s)
			mustDo(t, os.WriteFile(path, []byte(tt.content), 0o600))
			_, err = s.Load(context.Background())
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Load() = %v; want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("Load() error %q does not name the file %s", err, path)
			}
		})
	}
}

func workFile(s *Store) string { return filepath.Join(s.Dir(), worksDir, fileName("a")) }

func TestWorkHelpers(t *testing.T) {
	w := work("k", "v")
	if got := FromUpsert(w.Upsert()); !cmp.Equal(got, w, protocmp.Transform()) {
		t.Errorf("FromUpsert(Upsert()) = %+v; want %+v", got, w)
	}
	if got := (Work{}).DeletionPolicy(); got != agentv1.DeletionPolicy_DELETION_POLICY_DELETE {
		t.Errorf("DeletionPolicy() of no options = %s; want DELETE", got)
	}
	if got := w.DeletionPolicy(); got != agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN {
		t.Errorf("DeletionPolicy() = %s; want ORPHAN", got)
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestPendingRemovalSurvivesRestart: a deletion recorded before it starts
// is read back by the next agent process, so it is finished, not undone.
func TestPendingRemovalSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	pending := Held{Work: work("ns/job", "v1"), Hub: "hub-a", Removal: &Removal{
		Policy: agentv1.DeletionPolicy_DELETION_POLICY_DELETE,
		Reason: agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED,
		Hub:    "hub-a",
	}}
	mustDo(t, s.PutWork(context.Background(), pending))
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := again.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pending, got.Works["ns/job"], protocmp.Transform()); diff != "" {
		t.Errorf("Load() of a pending removal (-want +got):\n%s", diff)
	}
}

// TestLoadsEarlierWorkRecords: a work's record as agents wrote it in
// format version 1 (its upsert in protojson) and 2 (protobuf in base64,
// inside the JSON) loads as it was.
func TestLoadsEarlierWorkRecords(t *testing.T) {
	for _, tt := range []struct{ name, record string }{
		{"version 1", `{"format_version":1,"work_key":"a","hub_identity":"h",` +
			`"orphaned_since":"2026-01-02T03:04:05Z","upsert":{"workKey":"a","version":"v1",` +
			`"manifests":["eyJhcGlWZXJzaW9uIjoidjEiLCJraW5kIjoiQ29uZmlnTWFwIiwibWV0YWRhdGEiOnsibmFtZSI6IngifX0="],` +
			`"applyOptions":{"deletionPolicy":"DELETION_POLICY_ORPHAN"},"binding":{"namespace":"ns","name":"b","uid":"u"}}}` + "\n"},
		{"version 2", `{"format_version":2,"work_key":"a","hub_identity":"h","orphaned_since":"2026-01-02T03:04:05Z",` +
			`"upsert_proto":"CgFhEgJ2MRo+eyJhcGlWZXJzaW9uIjoidjEiLCJraW5kIjoiQ29uZmlnTWFwIiwibWV0YWRhdGEiOnsibmFtZSI6IngifX0iAhgCKgoKAm5zEgFiGgF1"}` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			mustDo(t, os.WriteFile(workFile(s), []byte(tt.record), 0o600))
			got, err := s.Load(context.Background())
			if err != nil {
				t.Fatalf("Load() = %v", err)
			}
			want := Held{Work: work("a", "v1"), Hub: "h", OrphanedSince: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
			if diff := cmp.Diff(want, got.Works["a"], protocmp.Transform()); diff != "" {
				t.Errorf("Load() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCorruptRemovalIsAClearError(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := workFile(s)
	mustDo(t, os.WriteFile(path, []byte(`{"format_version":1,"work_key":"a","hub_identity":"h","removal":{"deletion_policy":"SHRED","reason":"DELETE_REASON_FAILOVER"},"upsert":{"workKey":"a","version":"v1"}}`), 0o600))
	if _, err := s.Load(context.Background()); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "SHRED") {
		t.Errorf("Load() = %v; want ErrCorrupt naming the policy", err)
	}
}
