package agentapi_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/hashicorp/go-hclog"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/agentapi/agentapitest"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/internal/fuzzframe"
)

// Names of the fuzzed stream.
const (
	fuzzHub     = "fuzz-hub"
	fuzzCluster = "fuzz"
	// fuzzOther is another cluster, whose work "x" the fuzzed agent must
	// never receive nor touch.
	fuzzOther = "other"
	// connectWait bounds one Connect: every input ends with the agent
	// closing its side, so Connect must return at once.
	connectWait = 10 * time.Second
)

// FuzzConnect feeds arbitrary agent messages to the real per-stream
// handler (Server.Connect over an in-memory stream whose peer holds a
// verified agent certificate of cluster "fuzz"): the input is a sequence of
// 2-byte big-endian lengths, each followed by that many bytes unmarshalled
// as an AgentMessage (bytes that do not unmarshal are skipped, as gRPC
// refuses them before the handler). Whatever arrives, Connect returns, with
// nil (the agent closed) or a status of the agent's fault
// (InvalidArgument, ResourceExhausted) after a Goodbye; the agent only ever
// receives, acknowledges and reports cluster fuzz's works.
// Run with: go test -run '^$' -fuzz FuzzConnect -fuzztime 5m ./hub/agentapi/
func FuzzConnect(f *testing.F) {
	cert, ca := fuzzCert(f)
	for _, seq := range fuzzSeeds(fuzzCSR(f)) {
		f.Add(fuzzframe.Encode(seq...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs := fuzzframe.Decode[agentv1.AgentMessage](data)
		works := agentapitest.NewWorks()
		works.Set([]string{fuzzCluster}, work("a", "1"), work("b", "1"), work("c", "2"), work("r", "1"))
		works.Remove(fuzzCluster, "r")
		works.Set([]string{fuzzOther}, work("x", "1"))
		statuses := agentapitest.NewStatuses()
		leases := &fuzzLeases{}
		srv, err := agentapi.New(agentapi.Config{HubIdentity: fuzzHub, MaxWorks: 4, HelloTimeout: connectWait,
			Registry: &fuzzRegistry{ca: ca}, Customizations: fuzzCustomizations{}},
			works, statuses, leases, hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		ss := newFuzzStream(cert, msgs)
		done := make(chan error, 1)
		go func() { done <- srv.Connect(ss) }()
		var end error
		select {
		case end = <-done:
		case <-time.After(connectWait):
			t.Fatalf("Connect did not return within %s of the agent closing its side", connectWait)
		}
		closeCtx, cancel := context.WithTimeout(context.Background(), connectWait)
		defer cancel()
		if err := srv.Close(closeCtx); err != nil {
			t.Fatalf("Close: %v", err)
		}
		checkEnd(t, end, ss.sent())
		checkIsolation(t, ss.sent(), statuses, leases)
	})
}

// checkEnd: nil, or a status of the agent's fault with a message, told in
// a Goodbye first.
func checkEnd(t *testing.T, end error, sent []*agentv1.HubMessage) {
	t.Helper()
	if end == nil {
		return
	}
	st, ok := status.FromError(end)
	if !ok || st.Message() == "" || (st.Code() != codes.InvalidArgument && st.Code() != codes.ResourceExhausted) {
		t.Fatalf("Connect = %v; want nil, or InvalidArgument or ResourceExhausted with a message", end)
	}
	if len(sent) == 0 || sent[len(sent)-1].GetGoodbye() == nil {
		t.Fatalf("Connect = %v without a Goodbye last (sent %d messages)", end, len(sent))
	}
}

// checkIsolation: nothing of cluster other was sent, recorded or renewed.
func checkIsolation(t *testing.T, sent []*agentv1.HubMessage, statuses *agentapitest.Statuses, leases *fuzzLeases) {
	t.Helper()
	for i, m := range sent {
		if i == 0 && m.GetWelcome() == nil && m.GetGoodbye() == nil {
			t.Fatalf("first message %v; want Welcome or Goodbye", m)
		}
		if m.GetWorkUpsert().GetWorkKey() == "x" || m.GetWorkDelete().GetWorkKey() == "x" {
			t.Fatalf("cluster %s got %v of cluster %s", fuzzCluster, m, fuzzOther)
		}
		if pemCert := m.GetCertificateRenewed().GetCertificatePem(); len(pemCert) > 0 {
			checkRenewedFor(t, pemCert, fuzzCluster)
		}
	}
	acks, reports, _ := statuses.Recorded()
	for _, a := range acks {
		if a.Cluster != fuzzCluster || a.Ack.GetWorkKey() == "x" {
			t.Fatalf("ack %v recorded for cluster %s", a.Ack, a.Cluster)
		}
	}
	for _, r := range reports {
		if r.Cluster != fuzzCluster || r.Report.GetWorkKey() == "x" {
			t.Fatalf("report %v recorded for cluster %s", r.Report, r.Cluster)
		}
	}
	for _, c := range leases.clusters() {
		if c != fuzzCluster {
			t.Fatalf("heartbeat recorded for cluster %s", c)
		}
	}
}

// checkRenewedFor: a renewed certificate is cluster's agent's, whatever
// the request said.
func checkRenewedFor(t *testing.T, certPEM []byte, cluster string) {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("renewed certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("renewed certificate: %v", err)
	}
	id, err := pki.IdentityOf(cert)
	if err != nil || id.Name != cluster || id.Kind != pki.KindAgent {
		t.Fatalf("renewed certificate of %+v, %v; want cluster %s's agent", id, err, cluster)
	}
}

// fuzzSeeds are sequences of every AgentMessage kind: Hello, Ack,
// StatusReport, Heartbeat, CertificateRenewal (csrPEM a valid request)
// and CustomizationsAck.
func fuzzSeeds(csrPEM []byte) [][]*agentv1.AgentMessage {
	hello := func(identity string, kv ...string) *agentv1.AgentMessage {
		return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: held(identity, kv...)}}
	}
	ack := func(key, version string, r agentv1.ApplyResult) *agentv1.AgentMessage {
		return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{WorkKey: key, Version: version, Result: r}}}
	}
	report := func(key, version string) *agentv1.AgentMessage {
		return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: &agentv1.StatusReport{
			WorkKey: key, Version: version, Digest: "d",
			Manifests: []*agentv1.ManifestStatus{{Identity: &agentv1.ObjectIdentity{Version: "v1", Kind: "ConfigMap", Name: key}, StatusJson: []byte(`{}`)}},
		}}}
	}
	hb := &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{AgentVersion: "v",
		Conditions: []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}}}}}
	renew := &agentv1.AgentMessage{Message: &agentv1.AgentMessage_CertificateRenewal{CertificateRenewal: &agentv1.CertificateRenewal{}}}
	renewCSR := &agentv1.AgentMessage{Message: &agentv1.AgentMessage_CertificateRenewal{CertificateRenewal: &agentv1.CertificateRenewal{CsrPem: csrPEM}}}
	custAck := func(version string, refused ...string) *agentv1.AgentMessage {
		return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_CustomizationsAck{CustomizationsAck: &agentv1.CustomizationsAck{
			Version: version, Refused: refused,
		}}}
	}
	helloCustomizing := func() *agentv1.AgentMessage {
		h := hello("")
		h.GetHello().CustomizationsSupported = true
		return h
	}
	many := make([]string, 20)
	for i := range many {
		many[i] = "refused: does not decode"
	}
	applied, deleted := agentv1.ApplyResult_APPLY_RESULT_APPLIED, agentv1.ApplyResult_APPLY_RESULT_DELETED
	withStatus := hello(fuzzHub, "a", "1", "r", "1")
	withStatus.GetHello().ReportedStatuses = []*agentv1.ReportedStatus{{WorkKey: "a", Version: "1", StatusDigest: "d"}}
	return [][]*agentv1.AgentMessage{
		{},
		{hello("")},
		{hello(fuzzHub, "a", "1", "b", "0", "r", "1", "x", "1"), ack("b", "1", applied), ack("r", "", deleted), report("a", "1"), hb},
		{hello("another-hub", "a", "1"), report("a", "1"), ack("a", "1", applied), ack("x", "1", applied), report("x", "1")},
		{withStatus, report("c", "2"), renew, hb},
		{hb},
		{hello(""), hello("")},
		{hello(""), {}},
		{hello(fuzzHub, "a", "0"), ack("a", "0", applied), report("a", "0"), ack("a", "1", agentv1.ApplyResult_APPLY_RESULT_FAILED)},
		{hello(fuzzHub, "a", "1"), renewCSR, renewCSR, hb},
		{helloCustomizing(), custAck(fuzzCustomizationsVersion), custAck("other", many...), custAck("")},
		{custAck(fuzzCustomizationsVersion), renewCSR},
	}
}

// fuzzCert issues an agent certificate of cluster fuzz, and returns the
// CA that issued it.
func fuzzCert(f *testing.F) (*x509.Certificate, *pki.CA) {
	ca, err := pki.LoadOrCreateCA(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	issued, err := ca.IssueClient(pki.Identity{Name: fuzzCluster, Kind: pki.KindAgent}, time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	block, _ := pem.Decode(issued.CertPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		f.Fatal(err)
	}
	return cert, ca
}

// fuzzCSR is a PEM certificate request for a new key, naming another
// cluster (the hub must ignore the name).
func fuzzCSR(f *testing.F) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: fuzzOther}}, key)
	if err != nil {
		f.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// fuzzRegistry accepts every certificate of the stream and renews through
// the real CA, which parses the agent's CSR and signs it as the stream's
// cluster (hub/membership does the same after its store checks).
type fuzzRegistry struct{ ca *pki.CA }

func (r *fuzzRegistry) Register(context.Context, membership.Request) (membership.Result, error) {
	return membership.Result{}, membership.ErrInvalid
}

func (r *fuzzRegistry) Authorize(context.Context, string, *x509.Certificate) error { return nil }

func (r *fuzzRegistry) Renew(_ context.Context, req membership.Renewal) (membership.Result, error) {
	issued, err := r.ca.SignCSR(req.CSRPEM, pki.Identity{Name: req.Cluster, Kind: pki.KindAgent}, time.Hour)
	if err != nil {
		return membership.Result{}, fmt.Errorf("%w: %v", membership.ErrInvalid, err)
	}
	return membership.Result{CertPEM: issued.CertPEM, CAPEM: r.ca.CertPEM, Cert: issued.Cert, NotAfter: issued.Cert.NotAfter}, nil
}

// fuzzCustomizationsVersion is the version of the set fuzzCustomizations
// serves.
const fuzzCustomizationsVersion = "fuzz-c1"

// fuzzCustomizations serves one set that never changes, so that the hub
// sends it and the agent's CustomizationsAck answers something.
type fuzzCustomizations struct{}

func (fuzzCustomizations) Customizations() (*agentv1.Customizations, <-chan struct{}) {
	return &agentv1.Customizations{Version: fuzzCustomizationsVersion}, nil
}

// fuzzStream is an in-memory Connect stream: Recv hands out msgs, then
// io.EOF (the agent closed its side); Send records.
type fuzzStream struct {
	ctx context.Context

	mu   sync.Mutex // guards the fields below
	msgs []*agentv1.AgentMessage
	out  []*agentv1.HubMessage
}

func newFuzzStream(cert *x509.Certificate, msgs []*agentv1.AgentMessage) *fuzzStream {
	state := tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}, VerifiedChains: [][]*x509.Certificate{{cert}}}
	ctx := peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: state}})
	return &fuzzStream{ctx: ctx, msgs: msgs}
}

func (s *fuzzStream) Recv() (*agentv1.AgentMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.msgs) == 0 {
		return nil, io.EOF
	}
	m := s.msgs[0]
	s.msgs = s.msgs[1:]
	return m, nil
}

func (s *fuzzStream) Send(m *agentv1.HubMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out = append(s.out, m)
	return nil
}

func (s *fuzzStream) sent() []*agentv1.HubMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*agentv1.HubMessage(nil), s.out...)
}

func (s *fuzzStream) Context() context.Context     { return s.ctx }
func (s *fuzzStream) SetHeader(metadata.MD) error  { return nil }
func (s *fuzzStream) SendHeader(metadata.MD) error { return nil }
func (s *fuzzStream) SetTrailer(metadata.MD)       {}
func (s *fuzzStream) SendMsg(m any) error          { return s.Send(m.(*agentv1.HubMessage)) }
func (s *fuzzStream) RecvMsg(m any) error {
	msg, err := s.Recv()
	if err == nil {
		proto.Merge(m.(*agentv1.AgentMessage), msg)
	}
	return err
}

// fuzzLeases records the clusters heartbeats were recorded for.
type fuzzLeases struct {
	mu   sync.Mutex // guards seen
	seen []string
}

func (l *fuzzLeases) Heartbeat(cluster string, _ *agentv1.Heartbeat) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, cluster)
}

func (l *fuzzLeases) clusters() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}
