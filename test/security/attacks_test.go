package security

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// containedAttacks are the attacks of TestHostileInputs that are not one
// refused call: a read whose answer must hide something, floods whose
// excess must wait or end while the rest goes on, webhooks the hub must
// not reach. The registration floods come last: they spend the
// registration rate limit of 127.0.0.1.
func containedAttacks() []attack {
	return append([]attack{
		{"viewer reads a Secret", viewerReadsSecret},
		{"101 calls on one connection", streamsPerConnection},
		{"101 streams on one connection, the limit ignored", streamsIgnoringTheLimit},
		{"10 streams of one cluster at once", streamsPerCluster},
		{"10 streams of one cluster that never say Hello", silentStreamsPerCluster},
		{"stored customization that spins on real objects", spinningCustomization},
	}, append(webhookAttacks(), registrationFloods()...)...)
}

// secretValue is the data of the Secret viewers read; it must never reach
// them.
const secretValue = "hunter2-database-password"

// viewerReadsSecret: a viewer's Get, List, Watch and `tetherctl get secret
// -o yaml` of a stored Secret show its keys with empty values and the
// redaction annotation, never the data.
func viewerReadsSecret(t *testing.T, e *hostileEnv) string {
	secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: default}\nstringData: {password: %s}\n", secretValue)
	if _, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(secret)}); err != nil {
		t.Fatalf("apply the Secret as admin: %v", err)
	}
	objects := hubv1.NewObjectServiceClient(e.viewer)
	ref := &hubv1.ObjectRef{ApiVersion: "v1", Kind: "Secret", Namespace: "default", Name: "db"}
	got, err := objects.Get(rpcCtx(t), &hubv1.GetRequest{Ref: ref})
	if err != nil {
		t.Fatalf("viewer Get of the Secret: %v", err)
	}
	reads := map[string]string{"Get": string(got.GetObject().GetObjectJson())}
	list, err := objects.List(rpcCtx(t), &hubv1.ListRequest{ApiVersion: "v1", Kind: "Secret", Namespace: "default"})
	if err != nil {
		t.Fatalf("viewer List of Secrets: %v", err)
	}
	for _, o := range list.GetObjects() {
		reads["List"] += string(o.GetObjectJson())
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	ws, err := objects.Watch(ctx, &hubv1.WatchRequest{ApiVersion: "v1", Kind: "Secret", Namespace: "default", StartRevision: got.GetObject().GetRevision() - 1})
	if err != nil {
		t.Fatalf("viewer Watch of Secrets: %v", err)
	}
	ev, err := ws.Recv()
	if err != nil {
		t.Fatalf("viewer Watch of Secrets: %v", err)
	}
	reads["Watch"] = string(ev.GetObject().GetObjectJson())
	conf := filepath.Join(t.TempDir(), "viewer.conf")
	mustCtl(t, e.h.adminConf(), "user", "create", fmt.Sprintf("reader-%d", e.attacks), "--role", "viewer", "-o", conf)
	reads["tetherctl get secret db -o yaml"] = mustCtl(t, conf, "get", "secret", "db", "-n", "default", "-o", "yaml")
	for how, obj := range reads {
		if !strings.Contains(obj, "secret.tether.io/redacted") || !strings.Contains(obj, "password") {
			t.Errorf("viewer %s of the Secret = %.300s; want the key password and the redaction annotation", how, obj)
		}
		if strings.Contains(obj, secretValue) || strings.Contains(obj, "aHVudGVyMi") { // the value, or its base64
			t.Errorf("viewer %s of the Secret shows its data: %.300s", how, obj)
		}
	}
	return "contained: keys shown, values hidden in Get, List, Watch and tetherctl"
}

// streamsPerConnection: a viewer opens 101 Watch calls on one connection.
// The hub allows 100 calls at once per connection (its HTTP/2
// SETTINGS_MAX_CONCURRENT_STREAMS, tether-hub --max-streams-per-connection):
// the 101st waits, here until its deadline, and starts once one of the
// others ends.
func streamsPerConnection(t *testing.T, e *hostileEnv) string {
	const limit = 100 // tether-hub's default --max-streams-per-connection
	conn := dial(t, e.h.addr, userTLS(t, e.viewerConf))
	objects := hubv1.NewObjectServiceClient(conn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancels := make([]context.CancelFunc, limit)
	for i := range limit {
		var wctx context.Context
		wctx, cancels[i] = context.WithCancel(ctx)
		if _, err := objects.Watch(wctx, &hubv1.WatchRequest{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default"}); err != nil {
			t.Fatalf("Watch %d of %d on one connection: %v", i+1, limit, err)
		}
	}
	waiting, cancelWait := context.WithTimeout(ctx, 2*time.Second)
	defer cancelWait()
	if _, err := objects.Watch(waiting, &hubv1.WatchRequest{ApiVersion: "v1", Kind: "ConfigMap"}); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("Watch %d on one connection = %v; want it to wait for a free call (DeadlineExceeded here)", limit+1, err)
	}
	cancels[0]()
	if _, err := objects.Watch(rpcCtx(t), &hubv1.WatchRequest{ApiVersion: "v1", Kind: "ConfigMap"}); err != nil {
		t.Fatalf("Watch after one of the %d ended: %v; want it to start", limit, err)
	}
	return fmt.Sprintf("contained: call %d waited until one of %d ended", limit+1, limit)
}

// streamsPerCluster: the hostile agent opens 10 Connect streams at once,
// each on its own connection. The hub keeps at most 4 of one cluster in
// progress: the older ones end superseded, saying why.
func streamsPerCluster(t *testing.T, e *hostileEnv) string {
	const streams, limit = 10, 4 // agentapi.DefaultMaxStreamsPerCluster
	var opened []*agentStream
	for i := range streams {
		s, err := openStream(t, e.h, e.hostile)
		if err != nil {
			t.Fatalf("stream %d of the hostile cluster: %v", i+1, err)
		}
		opened = append(opened, s)
	}
	superseded := 0
	for i, s := range opened[:streams-limit] {
		bye, err, ended := s.ended(servingWait)
		if !ended {
			t.Fatalf("stream %d of %d of one cluster still open; want at most %d", i+1, streams, limit)
		}
		if bye.GetReason() == agentv1.DisconnectReason_DISCONNECT_REASON_SUPERSEDED {
			superseded++
		} else {
			t.Errorf("stream %d ended with goodbye %v (%v); want SUPERSEDED", i+1, bye, err)
		}
	}
	for _, s := range opened {
		s.cancel()
	}
	return fmt.Sprintf("contained: %d of %d streams ended superseded", superseded, streams)
}

// spinningCustomization: an admin stores a customization whose script
// passes the dry run (on an object without spec) but loops forever on a
// real object, then a workload it interprets. The hub's detector gives up
// on that workload within the Lua limits (its log says so) and goes on: a
// ConfigMap applied afterwards still gets its binding.
func spinningCustomization(t *testing.T, e *hostileEnv) string {
	ric := customization("spinner", "function GetReplicas(obj)\n  if obj.spec ~= nil and obj.spec.replicas ~= nil then\n    while true do end\n  end\n  return 1, {}\nend")
	manifests := ric + `---
apiVersion: example.com/v1
kind: Widgetspinner
metadata: {name: spun, namespace: default}
spec: {replicas: 2}
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: spun, namespace: default}
spec:
  resourceSelectors: [{apiVersion: example.com/v1, kind: Widgetspinner, name: spun}]
  placement: {clusterAffinity: {clusterNames: [nowhere]}}
`
	if _, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(manifests)}); err != nil {
		t.Fatalf("apply the customization, its workload and policy: %v", err)
	}
	refs := []*hubv1.ObjectRef{
		{ApiVersion: "policy.tether.io/v1alpha1", Kind: "PropagationPolicy", Namespace: "default", Name: "spun"},
		{ApiVersion: "example.com/v1", Kind: "Widgetspinner", Namespace: "default", Name: "spun"},
		{ApiVersion: "config.tether.io/v1alpha1", Kind: "ResourceInterpreterCustomization", Name: "spinner"},
		{ApiVersion: "policy.tether.io/v1alpha1", Kind: "PropagationPolicy", Namespace: "default", Name: "after-spin"},
		{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "after-spin"},
	}
	defer e.deleteAll(t, refs)
	about := "interpret replicas of Widgetspinner default/spun"
	poll(t, 60*time.Second, "hub log saying the detector gave up: "+about, func() (bool, string) {
		return strings.Contains(readFile(e.h.log), about), ""
	})
	start := time.Now()
	after := configMap("after-spin", "v") + "---\n" + strings.ReplaceAll(policyWith(1, "nowhere", func(int) string {
		return "{apiVersion: v1, kind: ConfigMap, name: after-spin}"
	}), "metadata: {name: p}", "metadata: {name: after-spin, namespace: default}")
	if _, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(after), DefaultNamespace: "default"}); err != nil {
		t.Fatalf("apply a ConfigMap and its policy after the spinning workload: %v", err)
	}
	places := hubv1.NewPlacementServiceClient(e.admin)
	poll(t, 60*time.Second, "the ConfigMap applied after the spinning workload bound", func() (bool, string) {
		resp, err := places.GetPlacement(rpcCtx(t), &hubv1.GetPlacementRequest{Template: refs[4]})
		return err == nil && resp.GetPlacement().GetBinding() != nil, fmt.Sprint(resp, err)
	})
	return fmt.Sprintf("contained: the workload's interpretation failed; the next template bound %.1f s later", time.Since(start).Seconds())
}

// deleteAll deletes refs as the admin, in order.
func (e *hostileEnv) deleteAll(t *testing.T, refs []*hubv1.ObjectRef) {
	t.Helper()
	for _, ref := range refs {
		if _, err := e.objects().Delete(rpcCtx(t), &hubv1.DeleteRequest{Ref: ref}); err != nil {
			t.Errorf("delete %s %s: %v", ref.GetKind(), ref.GetName(), err)
		}
	}
}

// silentStreamsPerCluster: the hostile agent opens 10 Connect calls, each
// on its own connection, and says nothing on them. The hub keeps at most 4
// calls of one cluster in progress, Hello or not: 6 end superseded at once
// instead of holding the hub's resources until the Hello timeout.
func silentStreamsPerCluster(t *testing.T, e *hostileEnv) string {
	const streams, limit = 10, 4 // agentapi.DefaultMaxStreamsPerCluster
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan error, streams)
	for i := range streams {
		cs, err := agentv1.NewAgentServiceClient(dial(t, e.h.addr, e.hostile.tlsConfig(t))).Connect(ctx)
		if err != nil {
			t.Fatalf("Connect %d of the hostile cluster: %v", i+1, err)
		}
		go func() { ended <- drain(cs.Recv) }()
	}
	timeout := time.After(servingWait)
	for n := 0; n < streams-limit; n++ {
		select {
		case err := <-ended:
			if !strings.Contains(err.Error(), fmt.Sprintf("opened more than %d streams at once", limit)) {
				t.Errorf("a silent stream of one cluster ended with %v; want superseded for being past %d", err, limit)
			}
		case <-timeout:
			t.Fatalf("%d of %d silent streams of one cluster ended within %s; want %d", n, streams, servingWait, streams-limit)
		}
	}
	cancel()
	for range limit {
		<-ended // the drains end with the context
	}
	return fmt.Sprintf("contained: %d of %d ended superseded at once", streams-limit, streams)
}

// registrationFloods: Register called 200 times from 127.0.0.1 with a bad
// token is cut off by the rate limit of that address. Then, while
// 127.0.0.1 goes on flooding, each call refused, a registration from
// another address (127.0.0.2) is served: the limit is per source, and a
// flood does not starve real registrations.
func registrationFloods() []attack {
	return []attack{hostileCase{"registration flood", func(t *testing.T, e *hostileEnv) error {
		return e.flood(t)
	}, codes.ResourceExhausted, []string{"registration rate limit", "registrations per second"}}.attack(),
		{"another source registers during a registration flood", func(t *testing.T, e *hostileEnv) string {
			if err := e.flood(t); status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("flood from 127.0.0.1 = %v; want ResourceExhausted", err)
			}
			if _, err := registerFrom(t, e.h, e.tok, "other-source", nil, "127.0.0.2"); err != nil {
				t.Fatalf("Register from 127.0.0.2 right after a flood from 127.0.0.1 was refused: %v; want served", err)
			}
			return "contained: the flooding address is limited, 127.0.0.2 registers"
		}},
	}
}

// flood calls Register from 127.0.0.1 with a bad token until the hub
// refuses with ResourceExhausted, at most 200 times, and returns the last
// refusal.
func (e *hostileEnv) flood(t *testing.T) error {
	var err error
	for range 200 {
		err = e.registerRaw(t, &agentv1.RegisterRequest{Token: "flood", ClusterName: "flood"})
		if status.Code(err) == codes.ResourceExhausted {
			return err
		}
	}
	if err == nil {
		return errors.New("200 registrations served")
	}
	return err
}

// TestHostileConnections: a hub with short connection bounds
// (--handshake-timeout 1s, --max-connection-idle 2s) closes a TCP
// connection that never starts TLS, a TLS connection that never answers
// the hub, and a well-behaved gRPC connection that makes no call, while it
// serves the probe.
func TestHostileConnections(t *testing.T) {
	e := newHostileEnv(t, "--handshake-timeout", "1s", "--max-connection-idle", "2s")
	runAttacks(t, e, []attack{
		{"TCP connection that never starts TLS", silentConnection},
		{"TLS connection that makes no call", idleConnection},
		{"gRPC connection that makes no call", idleClientConn},
	})
}

// silentConnection: a TCP connection that sends nothing is closed.
func silentConnection(t *testing.T, e *hostileEnv) string {
	conn, err := net.Dial("tcp", e.h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(servingWait)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n, err := conn.Read(make([]byte, 1))
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read of a silent connection = %d bytes, %v; want the hub to close it", n, err)
	}
	return fmt.Sprintf("contained: closed by the hub after %.1f s", time.Since(start).Seconds())
}

// idleConnection: a TLS connection with a viewer's certificate that sends
// the HTTP/2 preface and then nothing, not even the acknowledgements of the
// hub's settings and pings, is closed.
func idleConnection(t *testing.T, e *hostileEnv) string {
	tc := userTLS(t, e.viewerConf)
	tc.NextProtos = []string{"h2"}
	conn, err := tls.Dial("tcp", e.h.addr, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The HTTP/2 preface and an empty SETTINGS frame: a connection gRPC
	// accepts, on which no call ever starts.
	if _, err := conn.Write(append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(servingWait)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	buf := make([]byte, 4096)
	for {
		if _, err := conn.Read(buf); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("an idle TLS connection still open after %s; want the hub to close it", servingWait)
			}
			return fmt.Sprintf("contained: closed by the hub after %.1f s (%v)", time.Since(start).Seconds(), err)
		}
	}
}

// idleClientConn: a gRPC connection with a viewer's certificate that
// answers the hub's pings but makes no call is closed: it leaves Ready.
func idleClientConn(t *testing.T, e *hostileEnv) string {
	conn := dial(t, e.h.addr, userTLS(t, e.viewerConf))
	conn.Connect()
	poll(t, servingWait, "the idle connection ready", func() (bool, string) {
		return conn.GetState() == connectivity.Ready, conn.GetState().String()
	})
	start := time.Now()
	poll(t, servingWait, "the hub to close the idle connection", func() (bool, string) {
		return conn.GetState() != connectivity.Ready, conn.GetState().String()
	})
	return fmt.Sprintf("contained: closed by the hub after %.1f s", time.Since(start).Seconds())
}

// streamsIgnoringTheLimit: a client that ignores the hub's
// SETTINGS_MAX_CONCURRENT_STREAMS opens 101 Watch calls at once on one
// connection, raw HTTP/2 frames, sending no request message so that each
// stays in progress. The hub refuses the 101st stream (RST_STREAM
// REFUSED_STREAM) and keeps the others.
func streamsIgnoringTheLimit(t *testing.T, e *hostileEnv) string {
	const limit = 100 // tether-hub's default --max-streams-per-connection
	tc := userTLS(t, e.viewerConf)
	tc.NextProtos = []string{"h2"}
	conn, err := tls.Dial("tcp", e.h.addr, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for i := range limit + 1 {
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: watchHeaders(e.h.addr), EndHeaders: true}); err != nil {
			t.Fatalf("HEADERS of stream %d: %v", i+1, err)
		}
	}
	if err := conn.SetReadDeadline(time.Now().Add(servingWait)); err != nil {
		t.Fatal(err)
	}
	last := uint32(2*limit + 1)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("read from the hub: %v; want RST_STREAM of stream %d", err, last)
		}
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			if f.StreamID != last || f.ErrCode != http2.ErrCodeRefusedStream {
				t.Fatalf("RST_STREAM %v of stream %d; want only stream %d refused", f.ErrCode, f.StreamID, last)
			}
			return fmt.Sprintf("refused: stream %d reset %v, %d kept", limit+1, f.ErrCode, limit)
		case *http2.GoAwayFrame:
			t.Fatalf("GOAWAY %v; want only stream %d refused", f.ErrCode, last)
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		}
	}
}

// watchHeaders is the HPACK block of a Watch call's request headers.
func watchHeaders(authority string) []byte {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	for _, h := range [][2]string{
		{":method", "POST"}, {":scheme", "https"}, {":authority", authority},
		{":path", hubv1.ObjectService_Watch_FullMethodName}, {"content-type", "application/grpc"}, {"te", "trailers"},
	} {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	return b.Bytes()
}
