package agentapi_test

import (
	"context"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/pki"
)

func TestOneConnectionOpensAtMostItsStreams(t *testing.T) {
	h := startHub(t, agentapi.Config{MaxConcurrentStreams: 1})
	h.works.Set(edge1, work("a", "1"))
	conn := h.dial(t, &pki.Identity{Name: "edge-1", Kind: pki.KindAgent})
	first := openStream(t, conn, &agentv1.Hello{})
	first.expect("welcome "+hubIdentity, "upsert a@1", "syncdone 1")

	// A second stream on the same connection waits for a free one (the
	// client honours the hub's SETTINGS) and never reaches the service.
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if second, err := agentv1.NewAgentServiceClient(conn).Connect(ctx); err == nil {
		if err := second.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: &agentv1.Hello{}}}); err == nil {
			if m, err := second.Recv(); err == nil {
				t.Errorf("second stream on one connection received %s; want it held back", describe(m))
			}
		}
	}
	// The first stream was not superseded: it still serves.
	h.works.Set(edge1, work("a", "2"))
	first.expect("upsert a@2")
}

func TestAClusterOpensAtMostItsStreams(t *testing.T) {
	// The streams without Hello must outlive the test however slow the
	// machine: a Hello timeout would end the oldest before the cap does.
	h := startHub(t, agentapi.Config{MaxStreamsPerCluster: 2, HelloTimeout: time.Hour})
	// Each on its own connection, none says Hello yet.
	oldest := h.connect(t, "edge-1", nil)
	h.connect(t, "edge-1", nil)
	eventually(t, "two streams in progress", func() bool { return h.srv.Streams() == 0 && h.srv.Pending() == 2 })
	newest := h.connect(t, "edge-1", &agentv1.Hello{})
	newest.expect("welcome "+hubIdentity, "syncdone 0")
	oldest.expect("goodbye DISCONNECT_REASON_SUPERSEDED")
	eventually(t, "the cap's streams in progress", func() bool { return h.srv.Pending() == 2 })
}
