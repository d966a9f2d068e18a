package membership

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/certs"
)

// clock is a settable clock.
type clock struct{ now atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Unix(0, c.now.Load()) }
func (c *clock) advance(d time.Duration) { c.now.Add(int64(d)) }
func newClock(t time.Time) *clock        { c := &clock{}; c.now.Store(t.UnixNano()); return c }

func newRegistry(t *testing.T) (*Registry, *clock, *store.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ca, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock(time.Now())
	return NewRegistry(st, ca, Config{Now: clk.Now}, hclog.NewNullLogger()), clk, st
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func csr(t *testing.T) []byte {
	t.Helper()
	c, _, err := certs.NewCSR("x")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTokenLifecycle(t *testing.T) {
	r, clk, st := newRegistry(t)
	ctx := testCtx(t)
	single, info, err := r.CreateToken(ctx, TokenOptions{TTL: time.Hour, Uses: 1, Description: "one"})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := st.Get(ctx, store.TokenKey(info.ID))
	if err != nil {
		t.Fatal(err)
	}
	_, secret, _ := Parse(single)
	if string(kv.Value) == "" || contains(kv.Value, secret) {
		t.Errorf("stored token %s holds the secret; want only its hash", kv.Value)
	}
	if _, err := r.Register(ctx, Request{Token: single, Cluster: "edge-1", CSRPEM: csr(t)}); err != nil {
		t.Fatalf("Register with a fresh token: %v", err)
	}
	if _, err := r.Register(ctx, Request{Token: single, Cluster: "edge-2", CSRPEM: csr(t)}); !errors.Is(err, ErrRefused) {
		t.Errorf("Register with a used-up token = %v; want ErrRefused", err)
	}
	many, _, err := r.CreateToken(ctx, TokenOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	list, err := r.ListTokens(ctx)
	if err != nil || len(list) != 1 {
		t.Errorf("ListTokens = %+v, %v; want only the unused token", list, err)
	}
	clk.advance(2 * time.Minute)
	if _, err := r.Register(ctx, Request{Token: many, Cluster: "edge-3", CSRPEM: csr(t)}); !errors.Is(err, ErrRefused) {
		t.Errorf("Register with an expired token = %v; want ErrRefused", err)
	}
	if _, err := r.Register(ctx, Request{Token: "garbage", Cluster: "edge-3", CSRPEM: csr(t)}); !errors.Is(err, ErrMalformed) {
		t.Errorf("Register with a malformed token = %v; want ErrMalformed", err)
	}
	if _, _, err := r.CreateToken(ctx, TokenOptions{TTL: 30 * 24 * time.Hour}); !errors.Is(err, ErrInvalid) {
		t.Errorf("CreateToken(30 days) = %v; want ErrInvalid", err)
	}
	if err := r.DeleteToken(ctx, info.ID); err != nil {
		t.Errorf("DeleteToken: %v", err)
	}
	if err := r.DeleteToken(ctx, info.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteToken twice = %v; want ErrNotFound", err)
	}
}

func TestConcurrentRegistrationsTakeOneUse(t *testing.T) {
	r, _, _ := newRegistry(t)
	ctx := testCtx(t)
	tok, _, err := r.CreateToken(ctx, TokenOptions{Uses: 1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var ok atomic.Int32
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-" + string(rune('a'+i)), CSRPEM: csr(t)}); err == nil {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Errorf("%d of 8 concurrent registrations with a single-use token succeeded; want 1", ok.Load())
	}
}

// TestConcurrentRegistrationsShareAToken: a fleet installed at once with
// one token of unlimited uses registers every cluster; none is refused
// for the token's use count changing under it.
func TestConcurrentRegistrationsShareAToken(t *testing.T) {
	r, _, _ := newRegistry(t)
	ctx := testCtx(t)
	tok, _, err := r.CreateToken(ctx, TokenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const clusters = 32
	var wg sync.WaitGroup
	errs := make(chan error, clusters)
	for i := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.Register(ctx, Request{Token: tok, Cluster: fmt.Sprintf("edge-%02d", i), CSRPEM: csr(t)})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Register with a shared token = %v; want every concurrent registration to pass", err)
		}
	}
}

func TestKeyBindingApprovalAndRemoval(t *testing.T) {
	r, _, _ := newRegistry(t)
	ctx := testCtx(t)
	tok, _, err := r.CreateToken(ctx, TokenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t)})
	if err != nil {
		t.Fatal(err)
	}
	oldCert, _ := certs.ParseCertificate(first.CertPEM)
	if err := r.Authorize(ctx, "edge-1", oldCert); err != nil {
		t.Errorf("Authorize(registered certificate) = %v; want nil", err)
	}
	newCSR := csr(t)
	if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: newCSR}); !errors.Is(err, ErrPendingApproval) {
		t.Fatalf("Register(same name, new key) = %v; want ErrPendingApproval", err)
	}
	a, err := r.Agent(ctx, "edge-1")
	if err != nil || a.PendingKeyFingerprint == "" {
		t.Fatalf("Agent = %+v, %v; want a pending key", a, err)
	}
	if _, err := r.Approve(ctx, "edge-1", Fingerprint([]byte("another key"))); !errors.Is(err, ErrNoPending) {
		t.Errorf("Approve(wrong fingerprint) = %v; want ErrNoPending", err)
	}
	if _, err := r.Approve(ctx, "edge-1", a.PendingKeyFingerprint); err != nil {
		t.Fatalf("Approve: %v", err)
	}
	second, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: newCSR})
	if err != nil {
		t.Fatalf("Register after approval: %v", err)
	}
	if err := r.Authorize(ctx, "edge-1", oldCert); !errors.Is(err, ErrRevoked) {
		t.Errorf("Authorize(replaced certificate) = %v; want ErrRevoked", err)
	}
	newCert, _ := certs.ParseCertificate(second.CertPEM)
	if id, err := pki.IdentityOf(newCert); err != nil || id.Name != "edge-1" || id.Kind != pki.KindAgent {
		t.Errorf("identity of the new certificate = %+v, %v; want agent edge-1", id, err)
	}

	changed := make(chan string, 16)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Watch(wctx, func(c string) { changed <- c }) }()
	defer func() { stop(); <-done }()
	if got := <-changed; got != "edge-1" { // the initial listing
		t.Errorf("Watch listed %q; want edge-1", got)
	}
	if err := r.Remove(ctx, "edge-1"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-changed:
		if got != "edge-1" {
			t.Errorf("Watch after Remove reported %q; want edge-1", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("Watch reported nothing within 5s of Remove")
	}
	for _, c := range []*x509.Certificate{oldCert, newCert} {
		if err := r.Authorize(ctx, "edge-1", c); !errors.Is(err, ErrRevoked) {
			t.Errorf("Authorize after Remove = %v; want ErrRevoked", err)
		}
	}
	if err := r.Remove(ctx, "edge-1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove twice = %v; want ErrNotFound", err)
	}
	if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t)}); err != nil {
		t.Errorf("Register after Remove (new key) = %v; want it bound anew", err)
	}
}

func TestMintedClusterNeedsApproval(t *testing.T) {
	r, _, st := newRegistry(t)
	ctx := testCtx(t)
	if _, err := st.Create(ctx, store.ClusterKey("edge-1"), []byte(`{"metadata":{"name":"edge-1"}}`)); err != nil {
		t.Fatal(err)
	}
	tok, _, _ := r.CreateToken(ctx, TokenOptions{})
	if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t)}); !errors.Is(err, ErrPendingApproval) {
		t.Errorf("Register(name of a minted cluster) = %v; want ErrPendingApproval", err)
	}
	for _, bad := range []Request{{Token: tok, Cluster: "Edge_1", CSRPEM: csr(t)}, {Token: tok, Cluster: "edge-2", CSRPEM: []byte("nope")}} {
		if _, err := r.Register(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Register(%q, csr %d bytes) = %v; want ErrInvalid", bad.Cluster, len(bad.CSRPEM), err)
		}
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

// TestRegisterRecordsTopology: the Cluster record Register creates carries
// the topology and labels the agent reported (tether-agent --region, --labels).
func TestRegisterRecordsTopology(t *testing.T) {
	r, _, st := newRegistry(t)
	ctx := testCtx(t)
	tok, _, err := r.CreateToken(ctx, TokenOptions{TTL: time.Hour, Uses: 1})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t), Topology: &agentv1.Topology{
		Provider: "kwok", Region: "eu", Zones: []string{"eu-1a"}, Labels: map[string]string{"tier": "edge"}}}
	if _, err := r.Register(ctx, req); err != nil {
		t.Fatalf("Register: %v", err)
	}
	kv, err := st.Get(ctx, store.ClusterKey("edge-1"))
	if err != nil {
		t.Fatalf("cluster record: %v", err)
	}
	var c clusterv1alpha1.Cluster
	if err := json.Unmarshal(kv.Value, &c); err != nil {
		t.Fatal(err)
	}
	if c.Spec.Provider != "kwok" || c.Spec.Region != "eu" || len(c.Spec.Zones) != 1 || c.Labels["tier"] != "edge" {
		t.Errorf("record = spec %+v labels %v; want provider kwok, region eu, zone eu-1a, label tier=edge", c.Spec, c.Labels)
	}
}
