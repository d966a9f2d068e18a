package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/clientapi/clientapitest"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/revocation"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/hub/view"
)

// testHub is the hub's client API on a real gRPC server with TLS on
// 127.0.0.1 over a real embedded etcd, with a token registry and a
// revocation list, and an admin's client of it.
type testHub struct {
	st *store.Store
	c  *client.Client
}

func startHub(t *testing.T) *testHub {
	t.Helper()
	h := &testHub{st: etcdtest.Embedded(t)}
	ca, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v, err := view.New(h.st, []view.Prefix{revocation.Prefix()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	revoked := revocation.New(h.st, v, hclog.NewNullLogger())
	followed := make(chan error, 2)
	// The view and the follower stop when t.Context ends, before any
	// cleanup runs; the store, whose cleanup runs last, outlives them.
	go func() { followed <- v.Run(t.Context()) }()
	go func() { followed <- revoked.Run(t.Context()) }()
	t.Cleanup(func() { <-followed; <-followed })
	api, err := clientapi.New(clientapi.Config{Leases: liveness.New(liveness.Config{}), Revocations: revoked,
		Registry: membership.NewRegistry(h.st, ca, membership.Config{}, hclog.NewNullLogger())}, h.st, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	addr := clientapitest.Serve(t, api, ca, tls.RequireAndVerifyClientCert, clientapi.RefuseRevoked(revoked)...)
	issued, err := ca.IssueClient(pki.Identity{Name: "alice", Kind: pki.KindAdmin}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.c, err = client.Dial(ctx, client.Config{Address: addr, User: "alice", CAPEM: ca.CertPEM, CertPEM: issued.CertPEM, KeyPEM: issued.KeyPEM})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.c.Close() })
	return h
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// configMaps is a manifest of n ConfigMaps cm-0 ... in namespace default.
func configMaps(n int) []byte {
	var docs []string
	for i := range n {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: default}\ndata: {i: %q}\n", i, fmt.Sprint(i)))
	}
	return []byte(strings.Join(docs, "---\n"))
}

func names(objs []*hubv1.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetRef().GetName())
	}
	slices.Sort(out)
	return out
}

// TestListReadsEveryPage: List reads page after page at the first page's
// revision; ListPage reads one and hands the token of the next.
func TestListReadsEveryPage(t *testing.T) {
	h, ctx := startHub(t), testContext(t)
	resp, err := h.c.Apply(ctx, configMaps(5))
	if err != nil {
		t.Fatal(err)
	}
	sel := client.Selector{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default"}
	page, err := h.c.ListPage(ctx, sel, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Objects) != 2 || page.Next == "" || page.Revision < resp.GetRevision() {
		t.Errorf("ListPage(2) = %d objects, next %q, revision %d; want 2, a next token and revision >= %d",
			len(page.Objects), page.Next, page.Revision, resp.GetRevision())
	}
	if _, err := h.c.Apply(ctx, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: later, namespace: default}\n")); err != nil {
		t.Fatal(err)
	}
	all, rev, err := h.c.List(ctx, sel, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4", "later"}
	if got := names(all); !slices.Equal(got, want) {
		t.Errorf("List(pages of 2) = %v; want %v", got, want)
	}
	if rev <= page.Revision {
		t.Errorf("List revision %d; want the revision of its own first page, after %d", rev, page.Revision)
	}
}

// TestDelete: Delete returns the object as it was; a second one, or one
// expecting another revision, fails with the code that says so.
func TestDelete(t *testing.T) {
	h, ctx := startHub(t), testContext(t)
	if _, err := h.c.Apply(ctx, configMaps(2)); err != nil {
		t.Fatal(err)
	}
	ref := func(name string) *hubv1.ObjectRef {
		return &hubv1.ObjectRef{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: name}
	}
	if _, err := h.c.Delete(ctx, ref("cm-1"), client.DeleteOptions{ExpectedRevision: 1}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Delete(expected revision 1) = %v; want FailedPrecondition", err)
	}
	gone, err := h.c.Delete(ctx, ref("cm-0"), client.DeleteOptions{})
	if err != nil || gone.GetRef().GetName() != "cm-0" {
		t.Fatalf("Delete(cm-0) = %v, %v; want the deleted object", gone, err)
	}
	_, err = h.c.Delete(ctx, ref("cm-0"), client.DeleteOptions{})
	var explained *client.Error
	if !errors.As(err, &explained) || explained.Code != codes.NotFound {
		t.Errorf("Delete(cm-0) again = %v; want an explained NotFound", err)
	}
	if _, err := h.c.Get(ctx, ref("cm-1")); err != nil {
		t.Errorf("Get(cm-1) = %v; want it kept", err)
	}
}
