package secret_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// TestOverfullSecretIsNeverAcknowledged: a work that does not fit in the
// state Secret (Kubernetes' 1 MiB) is not applied and is acknowledged
// FAILED with the reason, never APPLIED; it is not in the state a restarted
// agent reads.
func TestOverfullSecretIsNeverAcknowledged(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	applier := hubtest.NewApplier()
	c, err := hubclient.New(hubclient.Config{
		Addrs: []string{hub.Addr}, TLS: certs.ClientTLS(t), AgentVersion: "v-test", Store: open("overfull"),
		Applier: applier, Backoff: func(int) time.Duration { return 20 * time.Millisecond },
	}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v; want nil after cancel", err)
		}
	}()

	s := hub.Next(t)
	big := hubtest.Upsert("big", "v1")
	big.GetWorkUpsert().Manifests = [][]byte{bytes.Repeat([]byte("x"), 1100<<10)}
	s.Send(t, hubtest.Welcome("hub-a", time.Second), hubtest.Upsert("small", "v1"), big, hubtest.SyncDone(2))
	ack := s.Recv(t, func(m *agentv1.AgentMessage) bool { return m.GetAck().GetWorkKey() == "big" }).GetAck()
	if ack.GetResult() != agentv1.ApplyResult_APPLY_RESULT_FAILED || !bytes.Contains([]byte(ack.GetMessage()), []byte("1 MiB")) {
		t.Errorf("ack of a work over the Secret's limit = %v; want FAILED saying 1 MiB", ack)
	}
	if err := applier.WaitFor(hubtest.Call{Op: "apply", Key: "small", Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	for _, call := range applier.Calls() {
		if call.Key == "big" {
			t.Errorf("call %+v; want a work that was not saved never applied", call)
		}
	}
	snap, err := open("overfull").Load(context.Background())
	if err != nil || len(snap.Works) != 1 {
		t.Errorf("Load() = %d works, %v; want only small", len(snap.Works), err)
	}
}
