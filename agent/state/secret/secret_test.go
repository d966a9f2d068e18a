package secret_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tetherproj/tether/agent/state"
	"github.com/tetherproj/tether/agent/state/secret"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

const namespace = "default"

func work(key, version string, manifests ...[]byte) state.Work {
	if len(manifests) == 0 {
		manifests = [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`)}
	}
	return state.Work{
		Key: key, Version: version, Manifests: manifests,
		Options: &agentv1.ApplyOptions{DeletionPolicy: agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN},
		Binding: &agentv1.BindingReference{Namespace: "ns", Name: "b", Uid: "u"},
	}
}

// open is a new agent process's store on the Secret name.
func open(name string) *state.Store {
	return state.New(secret.New(env.Clusters[0].Clientset().CoreV1().Secrets(namespace), namespace, name))
}

func TestRoundTrip(t *testing.T) {
	s := open("round-trip")
	orphan := state.Held{Work: work("ns/b/2", "v2"), Hub: "hub-a", OrphanedSince: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	mustDo(t, s.PutHub(context.Background(), "hub-b", state.Lineage{}))
	mustDo(t, s.PutWork(context.Background(), state.Held{Work: work("ns/b/1", "v0"), Hub: "hub-b"}))
	mustDo(t, s.PutWork(context.Background(), state.Held{Work: work("ns/b/1", "v1"), Hub: "hub-b"})) // replaces
	mustDo(t, s.PutWork(context.Background(), orphan))
	mustDo(t, s.PutWork(context.Background(), state.Held{Work: work("gone", "v1"), Hub: "hub-b"}))
	mustDo(t, s.DeleteWork(context.Background(), "gone"))
	mustDo(t, s.DeleteWork(context.Background(), "never-held"))
	mustDo(t, s.PutDigests(context.Background(), map[string]state.Digest{"ns/b/1": {Version: "v1", Digest: "d"}}))

	got, err := open("round-trip").Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := state.Snapshot{
		HubIdentity: "hub-b",
		Works: map[string]state.Held{
			"ns/b/1": {Work: work("ns/b/1", "v1"), Hub: "hub-b"},
			"ns/b/2": orphan,
		},
		Digests: map[string]state.Digest{"ns/b/1": {Version: "v1", Digest: "d"}},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("Load() mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadMissingSecret(t *testing.T) {
	got, err := open("never-written").Load(context.Background())
	if err != nil || got.HubIdentity != "" || len(got.Works) != 0 || len(got.Digests) != 0 {
		t.Errorf("Load() of a missing Secret = %+v, %v; want an empty state", got, err)
	}
}

// TestWriteAfterAnotherWriter checks a write on a stale copy retries on
// the conflict and keeps the other writer's key.
func TestWriteAfterAnotherWriter(t *testing.T) {
	ctx := context.Background()
	s := open("conflict")
	mustDo(t, s.PutHub(context.Background(), "hub-a", state.Lineage{}))
	secrets := env.Clusters[0].Clientset().CoreV1().Secrets(namespace)
	sec, err := secrets.Get(ctx, "conflict", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data["other"] = []byte("kept")
	if _, err := secrets.Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustDo(t, s.PutWork(context.Background(), state.Held{Work: work("a", "v1"), Hub: "hub-a"}))
	sec, err = secrets.Get(ctx, "conflict", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(sec.Data["other"]) != "kept" || len(sec.Data) != 3 {
		t.Errorf("Secret keys after a conflicting write = %v; want hub.json, the work and other", keys(sec.Data))
	}
	got, err := open("conflict").Load(context.Background())
	if err != nil || got.HubIdentity != "hub-a" || len(got.Works) != 1 {
		t.Errorf("Load() = %+v, %v; want hub-a and work a", got, err)
	}
}

// TestWriteAfterSecretDeleted checks a write on the copy of a Secret
// deleted since creates it again.
func TestWriteAfterSecretDeleted(t *testing.T) {
	s := open("deleted")
	mustDo(t, s.PutHub(context.Background(), "hub-a", state.Lineage{}))
	secrets := env.Clusters[0].Clientset().CoreV1().Secrets(namespace)
	mustDo(t, secrets.Delete(context.Background(), "deleted", metav1.DeleteOptions{}))
	mustDo(t, s.PutWork(context.Background(), state.Held{Work: work("a", "v1"), Hub: "hub-a"}))
	got, err := open("deleted").Load(context.Background())
	if err != nil || got.HubIdentity != "" || len(got.Works) != 1 {
		t.Errorf("Load() = %+v, %v; want no hub identity and work a", got, err)
	}
}

func TestCorruptBlobIsAClearError(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		content string
	}{
		{"truncated work", "", `{"format_version":1,"work_key":"a","upsert":{"workK`},
		{"work with a wrong key", "", `{"format_version":1,"work_key":"b","hub_identity":"h","upsert":{"workKey":"b","version":"v1"}}`},
		{"work with a bad upsert", "", `{"format_version":1,"work_key":"a","upsert":{"manifests":"not base64!"}}`},
		{"hub of another format", "hub.json", `{"format_version":7,"hub_identity":"h"}`},
		{"garbage digests", "digests.json", "\x00\x01binary"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			name := "corrupt-" + string(rune('a'+i))
			mustDo(t, open(name).PutWork(context.Background(), state.Held{Work: work("a", "v1"), Hub: "h"}))
			secrets := env.Clusters[0].Clientset().CoreV1().Secrets(namespace)
			sec, err := secrets.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			key := tt.key
			if key == "" {
				key = onlyKey(t, sec.Data)
			}
			sec.Data[key] = []byte(tt.content)
			if _, err := secrets.Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			_, err = open(name).Load(context.Background())
			if !errors.Is(err, state.ErrCorrupt) {
				t.Fatalf("Load() = %v; want ErrCorrupt", err)
			}
			if want := "secret " + namespace + "/" + name + " key " + key; !strings.Contains(err.Error(), want) {
				t.Errorf("Load() error %q does not name %q", err, want)
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	s := open("too-large")
	big := bytes.Repeat([]byte("x"), 600<<10) // one fits in the Secret, two do not
	mustDo(t, s.PutWork(context.Background(), state.Held{Work: work("a", "v1", big), Hub: "h"}))
	err := s.PutWork(context.Background(), state.Held{Work: work("b", "v1", big), Hub: "h"})
	if !errors.Is(err, secret.ErrTooLarge) {
		t.Fatalf("PutWork() over 1 MiB = %v; want ErrTooLarge", err)
	}
	for _, want := range []string{"1 MiB", "--data-dir", "default/too-large"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("PutWork() error %q does not say %q", err, want)
		}
	}
	got, err := open("too-large").Load(context.Background())
	if err != nil || len(got.Works) != 1 {
		t.Errorf("Load() after a refused write = %d works, %v; want work a only", len(got.Works), err)
	}
}

func onlyKey(t *testing.T, data map[string][]byte) string {
	t.Helper()
	if len(data) != 1 {
		t.Fatalf("Secret keys = %v; want one work", keys(data))
	}
	for k := range data {
		return k
	}
	return ""
}

func keys(data map[string][]byte) []string {
	var ks []string
	for k := range data {
		ks = append(ks, k)
	}
	return ks
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
