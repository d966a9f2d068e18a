package security

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// hostileEnv is one hub with the parties a hostile input must not harm: a
// viewer reading, an admin writing, and a bystander agent whose stream
// stays up; plus the hostile agent's registration and a bootstrap token.
type hostileEnv struct {
	h      *hubProc
	tok    token
	admin  *grpc.ClientConn
	viewer *grpc.ClientConn
	// viewerConf is the viewer's tetherctl config.
	viewerConf string
	// bystanders are the healthy clusters whose heartbeats the probe
	// times (bystanders_test.go); the first is named bystanderCluster.
	bystanders []*bystander
	// lastTimed is when the last timed heartbeat was sent.
	lastTimed time.Time
	hostile   registration
	// probes counts checkServing's heartbeats, each with its own agent
	// version so that the hub's reading of it can be told apart.
	probes int
	// hook is the serving certificate of hostile webhooks and its PEM, made
	// by hookCert.
	hook struct {
		cert  tls.Certificate
		caPEM []byte
	}
	// attacks counts the attacks run, which number the probes' ConfigMaps.
	attacks int
}

// Names of the hostile environment.
const (
	bystanderCluster = "bystander"
	hostileCluster   = "hostile"
	// servingWait bounds the check that the hub still serves the others.
	servingWait = 15 * time.Second
)

var webRef = &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}

// newHostileEnv starts a hub with flags and its parties, with
// defaultBystanders.
func newHostileEnv(t *testing.T, flags ...string) *hostileEnv {
	t.Helper()
	return newHostileEnvOf(t, defaultBystanders, flags...)
}

// newHostileEnvOf starts a hub with flags and its parties, with n
// bystanders.
func newHostileEnvOf(t *testing.T, n int, flags ...string) *hostileEnv {
	t.Helper()
	h := startHub(t, flags...)
	e := &hostileEnv{h: h, tok: createToken(t, h), viewerConf: filepath.Join(t.TempDir(), "viewer.conf")}
	mustCtl(t, h.adminConf(), "user", "create", "vera", "--role", "viewer", "-o", e.viewerConf)
	e.admin = dial(t, h.addr, userTLS(t, h.adminConf()))
	e.viewer = dial(t, h.addr, userTLS(t, e.viewerConf))
	if _, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(webYAML)}); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.hostile, err = register(t, h, e.tok, hostileCluster, nil); err != nil {
		t.Fatal(err)
	}
	e.startBystanders(t, n)
	e.checkServing(t)
	return e
}

func (e *hostileEnv) objects() hubv1.ObjectServiceClient {
	return hubv1.NewObjectServiceClient(e.admin)
}

// checkServing fails the test unless the hub process runs, a viewer's Get
// and an admin's dry-run Apply succeed, and the bystander's stream is up
// and read: a heartbeat sent on it shows in GetCluster (heartbeatRead).
func (e *hostileEnv) checkServing(t *testing.T) {
	t.Helper()
	select {
	case <-e.h.p.Done():
		t.Fatal("the hub process exited")
	default:
	}
	if _, err := hubv1.NewObjectServiceClient(e.viewer).Get(rpcCtx(t), &hubv1.GetRequest{Ref: webRef}); err != nil {
		t.Errorf("viewer Get after the hostile input = %v; want the object", err)
	}
	resp, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(webYAML), DryRun: true})
	if err != nil || len(resp.GetResults()) != 1 || resp.GetResults()[0].GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_UNCHANGED {
		t.Errorf("admin dry-run Apply after the hostile input = %v, %v; want UNCHANGED", resp.GetResults(), err)
	}
	e.probes++
	ctx, cancel := context.WithTimeout(context.Background(), servingWait)
	defer cancel()
	if _, _, err := e.heartbeatRead(ctx, fmt.Sprintf("probe-%d", e.probes), true); err != nil {
		t.Fatal(err)
	}
}

// apply sends manifests as an admin and returns the refusal: the call's
// error, or, when Apply answered, a refusal made of the rejected objects'
// messages and field errors (codes.OK: per-object rejection, nothing
// stored). A committed Apply is no refusal: nil.
func (e *hostileEnv) apply(t *testing.T, manifests []byte) error {
	t.Helper()
	resp, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: manifests, DryRun: true})
	if err != nil {
		return err
	}
	return rejectedOf(resp.GetResults())
}

// simulate calls Simulate over conn and returns the refusal, as apply
// does: the call's error, or the rejected inputs' messages.
func (e *hostileEnv) simulate(t *testing.T, conn *grpc.ClientConn, template, policies string) error {
	t.Helper()
	resp, err := hubv1.NewPlacementServiceClient(conn).Simulate(rpcCtx(t), &hubv1.SimulateRequest{
		Template: []byte(template), Policies: []byte(policies)})
	if err != nil {
		return err
	}
	return rejectedOf(resp.GetInputs())
}

// rejectedOf is the refusal made of results' rejected objects, nil when
// none is.
func rejectedOf(results []*hubv1.ApplyResult) error {
	var msgs []string
	for _, r := range results {
		if r.GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED {
			continue
		}
		msgs = append(msgs, r.GetMessage())
		for _, fe := range r.GetFieldErrors() {
			msgs = append(msgs, fmt.Sprintf("[%s %s: %s]", fe.GetField(), fe.GetType(), fe.GetDetail()))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &rejected{msg: strings.Join(msgs, " ")}
}

// rejected is Apply's per-object refusal.
type rejected struct{ msg string }

func (r *rejected) Error() string { return "REJECTED: " + r.msg }

// refusal is the code and message of a refusal; rejected objects are
// codes.OK.
func refusal(err error) (codes.Code, string) {
	var r *rejected
	if errors.As(err, &r) {
		return codes.OK, r.msg
	}
	s := status.Convert(err)
	return s.Code(), s.Message()
}

// agentExchange opens a stream with the hostile agent's certificate (or
// with tc when given), sends msgs in order, and returns how the stream
// ended, with the Goodbye's message prefixed when one came.
func (e *hostileEnv) agentExchange(t *testing.T, tc *tls.Config, msgs ...*agentv1.AgentMessage) error {
	t.Helper()
	if tc == nil {
		tc = e.hostile.tlsConfig(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	cs, err := agentv1.NewAgentServiceClient(dial(t, e.h.addr, tc)).Connect(ctx)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := cs.Send(m); err != nil {
			break // the hub ended the stream; Recv says how
		}
	}
	return drain(cs.Recv)
}

// drain receives until the stream ends; a Goodbye's message is kept in
// front of the final status's.
func drain[M interface{ GetGoodbye() *agentv1.Goodbye }](recv func() (M, error)) error {
	var bye string
	for {
		msg, err := recv()
		if err == nil {
			if g := msg.GetGoodbye(); g != nil {
				bye = fmt.Sprintf("goodbye %s: %s; ", g.GetReason(), g.GetMessage())
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%sstream closed by the hub without a status", bye)
		}
		s := status.Convert(err)
		return status.Error(s.Code(), bye+s.Message())
	}
}

// rawCodec sends and receives messages as given bytes, so that garbage
// reaches the hub's own decoding. It is named "proto" so that the hub
// decodes with its protobuf codec.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: %T is not []byte", v)
	}
	return b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: %T is not *[]byte", v)
	}
	*p = append((*p)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// invokeRaw calls a unary method with body as its request bytes.
func invokeRaw(t *testing.T, conn *grpc.ClientConn, method string, body []byte) error {
	t.Helper()
	var out []byte
	return conn.Invoke(rpcCtx(t), method, body, &out, grpc.ForceCodec(rawCodec{}))
}

// streamRaw opens Connect and sends body as its first message.
func (e *hostileEnv) streamRaw(t *testing.T, body []byte) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	conn := dial(t, e.h.addr, e.hostile.tlsConfig(t))
	cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true},
		agentv1.AgentService_Connect_FullMethodName, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return err
	}
	_ = cs.SendMsg(body)
	for {
		var out []byte
		if err := cs.RecvMsg(&out); err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("stream closed by the hub without a status")
			}
			return err
		}
	}
}

// registerRaw calls Register with the given fields, without pinning (the
// refusals come before any certificate would).
func (e *hostileEnv) registerRaw(t *testing.T, req *agentv1.RegisterRequest) error {
	t.Helper()
	conn := dial(t, e.h.addr, &tls.Config{RootCAs: e.hostile.caPool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	_, err := agentv1.NewAgentServiceClient(conn).Register(rpcCtx(t), req)
	return err
}
