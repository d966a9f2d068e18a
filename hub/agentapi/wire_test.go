package agentapi

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

func wireWork(i int) *agentv1.WorkUpsert {
	return &agentv1.WorkUpsert{WorkKey: fmt.Sprintf("core/ConfigMap/default/w%d", i), Version: fmt.Sprintf("v%d", i),
		Manifests:    [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w"}}`)},
		ApplyOptions: &agentv1.ApplyOptions{}, Binding: &agentv1.BindingReference{Name: "w"}}
}

// TestWorkEncodedOnce: the codec sends a work's message as protobuf
// encodes it, encoded once for every stream that sends the same upsert
// (each builds its own HubMessage around it); other messages as protobuf
// encodes them.
func TestWorkEncodedOnce(t *testing.T) {
	c := newWireCodec()
	up := wireWork(1)
	msg := func() *agentv1.HubMessage {
		return &agentv1.HubMessage{Message: &agentv1.HubMessage_WorkUpsert{WorkUpsert: up}}
	}
	want, err := proto.Marshal(msg())
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Marshal(msg())
	if err != nil {
		t.Fatal(err)
	}
	if got := first.Materialize(); string(got) != string(want) {
		t.Fatalf("work message encoded as %x, protobuf encodes %x", got, want)
	}
	var back agentv1.HubMessage
	if err := c.Unmarshal(first, &back); err != nil || !proto.Equal(&back, msg()) {
		t.Fatalf("decoded %v (%v), want %v", &back, err, msg())
	}
	again, err := c.Marshal(msg())
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 1 || len(again) != 1 || &first[0].ReadOnlyData()[0] != &again[0].ReadOnlyData()[0] {
		t.Errorf("the same work sent twice was encoded twice")
	}
	other := &agentv1.HubMessage{Message: &agentv1.HubMessage_SyncDone{SyncDone: &agentv1.SyncDone{}}}
	got, err := c.Marshal(other)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := proto.Marshal(other); string(got.Materialize()) != string(want) {
		t.Errorf("SyncDone encoded as %x, protobuf encodes %x", got.Materialize(), want)
	}
}

// TestEncodedWorksBounded: the shared encodings keep the latest works
// within their count and bytes, and a work they dropped is encoded again,
// alike.
func TestEncodedWorksBounded(t *testing.T) {
	one, err := proto.Marshal(&agentv1.HubMessage{Message: &agentv1.HubMessage_WorkUpsert{WorkUpsert: wireWork(0)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name               string
		maxWorks, maxBytes int
		held               int
	}{
		{"by count", 3, 1 << 20, 3},
		{"by bytes", 100, 2*len(one) + len(one)/2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newEncodedWorks(tt.maxWorks, tt.maxBytes)
			ups := make([]*agentv1.WorkUpsert, 6)
			for i := range ups {
				ups[i] = wireWork(i)
				if _, err := w.get(ups[i]); err != nil {
					t.Fatal(err)
				}
			}
			if len(w.bytes) != tt.held || len(w.order) != tt.held || w.size != tt.held*len(one) {
				t.Fatalf("holds %d works (%d in order, %d bytes), want the latest %d (%d bytes)",
					len(w.bytes), len(w.order), w.size, tt.held, tt.held*len(one))
			}
			for i, up := range ups {
				if _, held := w.bytes[up]; held != (i >= len(ups)-tt.held) {
					t.Errorf("work %d held: %v", i, held)
				}
			}
			again, err := w.get(ups[0])
			want, _ := proto.Marshal(&agentv1.HubMessage{Message: &agentv1.HubMessage_WorkUpsert{WorkUpsert: ups[0]}})
			if err != nil || string(again) != string(want) {
				t.Errorf("a dropped work encoded again as %x (%v), want %x", again, err, want)
			}
		})
	}
}
