package ha_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/ha"
)

// refusalTimeout bounds how long a refused replica may take to exit: it
// reads etcd once, then stops.
const refusalTimeout = time.Minute

// caHashKey is where the first replica records the hub CA's hash
// (hub/store.CAHashKey).
const caHashKey = "/tether/meta/ca-hash"

// differentCA starts a replica on the store with another CA (files) and
// one with another CA encryption key: each must exit non-zero, saying
// why, and leave the recorded CA and the running replica alone.
func differentCA(t *testing.T) {
	x := newFixture(t, options{replicas: 1, noMembers: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*refusalTimeout)
	defer cancel()
	before := x.caHash(ctx)
	other, err := ha.NewCA(x.dir, "other-hub-ca")
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	otherKey := filepath.Join(x.dir, "other-encryption.key")
	if err := os.WriteFile(otherKey, []byte(base64.StdEncoding.EncodeToString(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string // in the refused replica's output
	}{
		{"other-ca-files", []string{"--ca-cert", other.CertFile, "--ca-key", other.KeyFile}, []string{"is not the hub's CA", "recorded in etcd", before}},
		{"other-encryption-key", []string{"--ca-encryption-key-file", otherKey}, []string{"open the CA sealed in etcd"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			begin := time.Now()
			out := x.refused(ctx, t, i+1, c.args)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("refused replica's output lacks %q:\n%s", w, out)
				}
			}
			t.Logf("FIGURES %s: refused_after=%s", t.Name(), fig(time.Since(begin)))
		})
	}
	if after := x.caHash(ctx); after != before {
		t.Errorf("recorded CA hash changed from %s to %s", before, after)
	}
	if err := x.waitLeading(ctx, x.hubs[0]); err != nil {
		t.Errorf("the replica of the store's CA no longer leads: %v", err)
	}
}

// refused starts replica i with the store's etcd and args instead of the
// shared CA, waits for it to exit, checks it failed, and returns its
// output.
func (x *fixture) refused(ctx context.Context, t *testing.T, i int, args []string) string {
	ports, err := ha.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	r := ha.NewReplica(x.sp, i, filepath.Join(x.dir, "refused-"+strconv.Itoa(i)),
		net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		nil, append(x.etcd.HubArgs("127.0.0.1"), args...))
	if err := r.Start(x.hubBin); err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	select {
	case <-r.Done():
	case <-time.After(refusalTimeout):
		t.Fatalf("replica with %v still runs after %s; want it refused", args, refusalTimeout)
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	exit := r.Exited().Error()
	if !strings.Contains(exit, "exit status") {
		t.Errorf("refused replica exited without a failure status: %s", exit)
	}
	out, err := os.ReadFile(r.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// caHash reads the recorded CA hash.
func (x *fixture) caHash(ctx context.Context) string {
	resp, err := x.ec.Get(ctx, caHashKey)
	if err != nil {
		x.t.Fatal(err)
	}
	if len(resp.Kvs) != 1 {
		x.t.Fatalf("no %s in etcd", caHashKey)
	}
	return string(resp.Kvs[0].Value)
}
