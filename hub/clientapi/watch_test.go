package clientapi_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
)

func TestWatchAddedModifiedDeleted(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	list, err := c.objects.List(ctx(t), &hubv1.ListRequest{Kind: "ConfigMap"})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := h.dial(t, viewer).objects.Watch(ctx(t), &hubv1.WatchRequest{Kind: "ConfigMap", Namespace: "default", StartRevision: list.GetRevision()})
	if err != nil {
		t.Fatal(err)
	}
	cm := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "%s"}}`
	c.apply(t, []byte(strings.Replace(cm, "%s", "1", 1)), false)
	c.apply(t, []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": "elsewhere"}}`), false)
	c.apply(t, []byte(strings.Replace(cm, "%s", "2", 1)), false)
	if _, err := c.objects.Delete(ctx(t), &hubv1.DeleteRequest{Ref: &hubv1.ObjectRef{Kind: "ConfigMap", Namespace: "default", Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	var prev int64
	for _, want := range []hubv1.EventType{hubv1.EventType_EVENT_TYPE_ADDED, hubv1.EventType_EVENT_TYPE_MODIFIED, hubv1.EventType_EVENT_TYPE_DELETED} {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if ev.GetType() != want || ev.GetObject().GetRef().GetName() != "a" || ev.GetObject().GetRevision() <= prev {
			t.Errorf("event = %v %v at %d; want %v of ConfigMap a after revision %d", ev.GetType(), ev.GetObject().GetRef(), ev.GetObject().GetRevision(), want, prev)
		}
		prev = ev.GetObject().GetRevision()
	}
}

func TestWatchFromCompactedRevision(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	first := c.apply(t, []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}`), false)
	last := c.apply(t, []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}`), false)
	if err := h.st.Compact(ctx(t), last.GetRevision()); err != nil {
		t.Fatal(err)
	}
	stream, err := c.objects.Watch(ctx(t), &hubv1.WatchRequest{Kind: "ConfigMap", StartRevision: first.GetRevision() - 1})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.OutOfRange || !strings.Contains(err.Error(), "compacted") {
		t.Errorf("Watch from a compacted revision = %v; want OutOfRange saying compacted", err)
	}
}
