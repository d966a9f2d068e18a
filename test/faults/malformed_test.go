package faults_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
)

// badStatus is a manifest status that is not JSON.
var badStatus = []byte(`{"readyReplicas": 3,,, not json`)

// hubSurvives is how long the hub must keep running after a malformed
// status: many times the aggregator's flush interval (200 ms), so that the
// status has been folded, or refused, well before it ends.
const hubSurvives = 15 * time.Second

// malformedStatus: edge-2's agent is replaced by a raw gRPC client with
// the agent's own credentials, which reports every work it gets with a
// status_json that is not JSON. The hub must keep running and serving the
// other clusters; then the real agent returns.
func malformedStatus(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := x.begin(t.Name())
	if err := x.fleet.Kill(fleet.RoleAgent, "edge-2"); err != nil {
		t.Fatal(err)
	}
	works, closeRaw, err := sendMalformed(ctx, x, "edge-2")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sent a malformed status for %d works as edge-2", works)
	err = proc.Poll(ctx, time.Second, func(ctx context.Context) error {
		if err := x.fleet.Running(fleet.RoleHub, "hub"); err != nil {
			return proc.Permanent(err)
		}
		if time.Since(r.faultAt) < hubSurvives {
			return fmt.Errorf("hub up for %s", time.Since(r.faultAt).Round(time.Second))
		}
		return nil
	})
	closeRaw() // the raw stream stayed open while the hub had its reports
	if err != nil {
		t.Errorf("the hub did not survive a malformed status: %v", err)
		if err := x.fleet.Restart(ctx, fleet.RoleHub, "hub"); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.fleet.Restart(ctx, fleet.RoleAgent, "edge-2"); err != nil {
		t.Fatal(err)
	}
	r.healed()
	r.converge()
	r.finish()
}

// sendMalformed connects to the hub as cluster's agent, waits for the
// initial works (SyncDone), acknowledges each as applied and reports a
// status that is not JSON for each. It returns how many works it
// reported, once the reports are sent, and a function that closes the
// stream (on error, the stream is closed already).
func sendMalformed(ctx context.Context, x *fixture, cluster string) (int, func(), error) {
	creds, err := agentTLS(x, cluster)
	if err != nil {
		return 0, nil, err
	}
	conn, err := grpc.NewClient(x.fleet.HubAddr, grpc.WithTransportCredentials(credentials.NewTLS(creds)))
	if err != nil {
		return 0, nil, fmt.Errorf("dial hub: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	closeRaw := func() { cancel(); conn.Close() }
	n, err := reportMalformed(ctx, agentv1.NewAgentServiceClient(conn))
	if err != nil {
		closeRaw()
		return 0, nil, err
	}
	return n, closeRaw, nil
}

// reportMalformed runs sendMalformed's exchange on a new stream, which
// stays open until ctx ends.
func reportMalformed(ctx context.Context, client agentv1.AgentServiceClient) (int, error) {
	stream, err := client.Connect(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	if err := stream.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: &agentv1.Hello{AgentVersion: "faults-raw"}}}); err != nil {
		return 0, fmt.Errorf("send Hello: %w", err)
	}
	var upserts []*agentv1.WorkUpsert
	for {
		msg, err := stream.Recv()
		if err != nil {
			return 0, fmt.Errorf("receive: %w", err)
		}
		if u := msg.GetWorkUpsert(); u != nil {
			upserts = append(upserts, u)
		}
		if msg.GetSyncDone() != nil {
			break
		}
	}
	for _, u := range upserts {
		for _, m := range malformedReport(u) {
			if err := stream.Send(m); err != nil {
				return 0, fmt.Errorf("send report of %s: %w", u.GetWorkKey(), err)
			}
		}
	}
	return len(upserts), nil
}

// malformedReport acknowledges u as applied and reports a status for its
// first manifest that is not JSON.
func malformedReport(u *agentv1.WorkUpsert) []*agentv1.AgentMessage {
	return []*agentv1.AgentMessage{
		{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{
			WorkKey: u.GetWorkKey(), Version: u.GetVersion(), Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED,
		}}},
		{Message: &agentv1.AgentMessage_StatusReport{StatusReport: &agentv1.StatusReport{
			WorkKey: u.GetWorkKey(), Version: u.GetVersion(), Digest: "faults-malformed",
			Manifests: []*agentv1.ManifestStatus{{
				Identity:   &agentv1.ObjectIdentity{Ordinal: 0},
				StatusJson: badStatus, Health: agentv1.Health_HEALTH_HEALTHY, Applied: true,
			}},
		}}},
	}
}

// agentTLS returns the client TLS configuration of cluster's agent, from
// the credentials it registered (its --data-dir), or else those minted for
// it (fleet.RegisterMint).
func agentTLS(x *fixture, cluster string) (*tls.Config, error) {
	dir := filepath.Join(x.fleet.Dir, "agents", cluster, "state")
	if _, err := os.Stat(filepath.Join(dir, "tls.crt")); err != nil {
		dir = filepath.Dir(dir)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s", filepath.Join(dir, "ca.crt"))
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
