package membership

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// TestModelsFollowRecords: Models serves each cluster's resource models,
// sorted by grade, wakes its followers when they change, and drops them
// with the record.
func TestModelsFollowRecords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	defer st.Close()
	put := func(record string) {
		t.Helper()
		if _, err := st.Put(ctx, store.ClusterKey("edge-1"), []byte(record)); err != nil {
			t.Fatal(err)
		}
	}
	put(`{"metadata":{"name":"edge-1"},"spec":{"resourceModels":[
	  {"grade":1,"ranges":[{"name":"cpu","min":"4","max":"64"}]},{"grade":0,"ranges":[{"name":"cpu","min":"0","max":"4"}]}]}}`)
	v, err := view.New(st, view.HubPrefixes(), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	m := NewModels(v, hclog.NewNullLogger())
	_, loaded := m.ResourceModels("edge-1")
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() { done <- v.Run(rctx) }()
	go func() { done <- m.Run(rctx) }()
	defer func() {
		stop()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("Run = %v; want nil", err)
			}
		}
	}()
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
			t.Fatalf("no wake-up for %s", what)
		}
	}
	wait(loaded, "the first list")
	models, changed := m.ResourceModels("edge-1")
	if got := grades(models); got != "0:cpu[0,4) 1:cpu[4,64)" {
		t.Fatalf("ResourceModels(edge-1) = %s; want grades 0 and 1 in order", got)
	}

	// A label change (same models), then a models change, which wakes the
	// followers.
	put(`{"metadata":{"name":"edge-1","labels":{"tier":"edge"}},"spec":{"resourceModels":[
	  {"grade":0,"ranges":[{"name":"cpu","min":"0","max":"4"}]},{"grade":1,"ranges":[{"name":"cpu","min":"4","max":"64"}]}]}}`)
	put(`{"metadata":{"name":"edge-1"},"spec":{"resourceModels":[{"grade":0,"ranges":[{"name":"cpu","min":"0","max":"8"}]}]}}`)
	wait(changed, "a models change")
	models, changed = m.ResourceModels("edge-1")
	if got := grades(models); got != "0:cpu[0,8)" {
		t.Errorf("after the change, ResourceModels(edge-1) = %s; want 0:cpu[0,8)", got)
	}
	if _, err := st.Delete(ctx, store.ClusterKey("edge-1"), 0); err != nil {
		t.Fatal(err)
	}
	wait(changed, "the record's deletion")
	if models, _ := m.ResourceModels("edge-1"); models != nil {
		t.Errorf("after deletion, ResourceModels(edge-1) = %s; want none", grades(models))
	}
}

func grades(models []*agentv1.ResourceModel) string {
	var out string
	for i, m := range models {
		if i > 0 {
			out += " "
		}
		out += string(rune('0'+m.GetGrade())) + ":"
		for _, r := range m.GetRanges() {
			out += r.GetName() + "[" + r.GetMin() + "," + r.GetMax() + ")"
		}
	}
	return out
}
