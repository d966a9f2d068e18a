package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
)

// openBound bounds an Open that must fail fast: far above the store's
// 10 s first-request timeout, far below a hang.
const openBound = time.Minute

// openAsync runs Open with a context that never ends, so that only the
// store's own bound can end a hang, and waits up to openBound.
func openAsync(t *testing.T, cfg store.Config) (*store.Store, error) {
	t.Helper()
	type result struct {
		st  *store.Store
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := store.Open(context.Background(), cfg, hclog.NewNullLogger())
		done <- result{st, err}
	}()
	select {
	case r := <-done:
		if r.st != nil {
			t.Cleanup(func() { r.st.Close() })
		}
		return r.st, r.err
	case <-time.After(openBound):
		t.Fatalf("Open(%v) still running after %s; want a bounded first request", cfg.Endpoints, openBound)
		return nil, nil
	}
}

// The tests whose Open waits out the store's 10 s first-request timeout
// run in parallel: the waits overlap.
func TestOpenTLSOnlyEtcd(t *testing.T) {
	t.Parallel()
	e := etcdtest.Start(t, etcdtest.Options{TLS: true})
	files := store.TLS{CAFile: e.CAFile, CertFile: e.CertFile, KeyFile: e.KeyFile}
	st, err := openAsync(t, store.Config{Endpoints: e.Endpoints, TLS: files})
	if err != nil {
		t.Fatalf("Open with TLS files: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := st.Put(ctx, store.TokenKey("t"), []byte("over tls")); err != nil {
		t.Fatalf("Put over TLS: %v", err)
	}
	if got, err := st.Get(ctx, store.TokenKey("t")); err != nil || string(got.Value) != "over tls" {
		t.Errorf("Get over TLS = %q, %v; want \"over tls\"", got.Value, err)
	}

	t.Run("without client certificate", func(t *testing.T) {
		t.Parallel()
		_, err := openAsync(t, store.Config{Endpoints: e.Endpoints, TLS: store.TLS{CAFile: e.CAFile}})
		if err == nil || !strings.Contains(err.Error(), e.Endpoints[0]) {
			t.Errorf("Open without a client certificate = %v; want an error naming %s", err, e.Endpoints[0])
		}
	})
	t.Run("without TLS files", func(t *testing.T) {
		t.Parallel()
		_, err := openAsync(t, store.Config{Endpoints: e.Endpoints})
		if err == nil || !strings.Contains(err.Error(), e.Endpoints[0]) {
			t.Errorf("Open without TLS files = %v; want an error naming %s", err, e.Endpoints[0])
		}
	})
}

func TestOpenRefusesTLSFilesItWouldIgnore(t *testing.T) {
	files := store.TLS{CAFile: "/nonexistent/ca.crt"}
	for name, cfg := range map[string]store.Config{
		"http endpoint":    {Endpoints: []string{"http://127.0.0.1:2379"}, TLS: files},
		"embedded etcd":    {DataDir: t.TempDir(), TLS: files},
		"cert without key": {Endpoints: []string{"https://127.0.0.1:2379"}, TLS: store.TLS{CertFile: "/x/tls.crt"}},
		"unreadable CA":    {Endpoints: []string{"https://127.0.0.1:2379"}, TLS: files},
	} {
		t.Run(name, func(t *testing.T) {
			if st, err := openAsync(t, cfg); err == nil {
				st.Close()
				t.Errorf("Open(%+v) succeeded; want an error", cfg)
			} else {
				t.Logf("Open: %v", err)
			}
		})
	}
}

func TestOpenUnreachableFailsFastNamingEndpoints(t *testing.T) {
	t.Parallel()
	endpoints := []string{"http://127.0.0.1:1", "http://127.0.0.1:9"}
	_, err := openAsync(t, store.Config{Endpoints: endpoints})
	if err == nil {
		t.Fatal("Open of unreachable endpoints succeeded; want an error")
	}
	for _, ep := range endpoints {
		if !strings.Contains(err.Error(), ep) {
			t.Errorf("Open error %q does not name endpoint %s", err, ep)
		}
	}
}
