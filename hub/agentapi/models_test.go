package agentapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// TestResourceModelsReachTheAgent: Welcome carries the cluster's resource
// models as stored in its record (hub/membership's Models on a real
// etcd), and a change of them reaches the open stream as new Settings.
func TestResourceModelsReachTheAgent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	put := func(models string) {
		t.Helper()
		rec := `{"metadata":{"name":"edge-1"},"spec":{"resourceModels":` + models + `}}`
		if _, err := st.Put(ctx, store.ClusterKey("edge-1"), []byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	put(`[{"grade":0,"ranges":[{"name":"cpu","min":"0","max":"4"}]},{"grade":1,"ranges":[{"name":"cpu","min":"4","max":"64"}]}]`)
	v, err := view.New(st, view.HubPrefixes(), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	models := membership.NewModels(v, hclog.NewNullLogger())
	_, loaded := models.ResourceModels("edge-1")
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() { done <- v.Run(rctx) }()
	go func() { done <- models.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done; <-done })
	<-loaded

	h := startHub(t, agentapi.Config{ResourceModels: models})
	a := h.connect(t, "edge-1", held(""))
	welcome := a.recv().GetWelcome()
	if got := modelString(welcome.GetSettings().GetResourceModels()); got != "0:cpu[0,4) 1:cpu[4,64)" {
		t.Fatalf("Welcome resource models = %q; want grades 0 and 1", got)
	}
	a.expect("syncdone 0")

	put(`[{"grade":0,"ranges":[{"name":"cpu","min":"0","max":"8"}]}]`)
	settings := a.recv().GetSettings()
	if got := modelString(settings.GetResourceModels()); got != "0:cpu[0,8)" || settings.GetHeartbeatInterval() == nil {
		t.Errorf("Settings after the change = models %q, heartbeat interval %v; want 0:cpu[0,8) and the whole settings", got, settings.GetHeartbeatInterval())
	}
	other := h.connect(t, "other", held(""))
	if got := modelString(other.recv().GetWelcome().GetSettings().GetResourceModels()); got != "" {
		t.Errorf("Welcome of a cluster without models carries %q; want none", got)
	}
}

func modelString(models []*agentv1.ResourceModel) string {
	var parts []string
	for _, m := range models {
		var rs []string
		for _, r := range m.GetRanges() {
			rs = append(rs, r.GetName()+"["+r.GetMin()+","+r.GetMax()+")")
		}
		parts = append(parts, string(rune('0'+m.GetGrade()))+":"+strings.Join(rs, ","))
	}
	return strings.Join(parts, " ")
}
