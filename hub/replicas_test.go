package hub_test

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/internal/clientconfig"
)

// replicaTimeout bounds a replica's start-up and each exchange with it.
const replicaTimeout = 90 * time.Second

// replica is one in-process hub.Run.
type replica struct {
	dir  string
	addr string
	err  chan error // Run's result
}

// baseConfig is a replica's configuration on the etcd e, over TLS.
func baseConfig(t *testing.T, e *etcdtest.Etcd) hub.Config {
	return hub.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", EtcdEndpoints: e.Endpoints,
		EtcdTLS: store.TLS{CAFile: e.CAFile, CertFile: e.CertFile, KeyFile: e.KeyFile}}
}

// runReplica starts a hub with cfg; it is stopped at the end of the test.
func runReplica(t *testing.T, cfg hub.Config) *replica {
	t.Helper()
	h, err := hub.New(cfg, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("hub.New: %v", err)
	}
	r, _ := startHub(t, h, cfg.DataDir)
	return r
}

// startHub runs h, whose data directory is dir, until stop is called or
// the test ends.
func startHub(t *testing.T, h *hub.Hub, dir string) (r *replica, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	r = &replica{dir: dir, err: make(chan error, 1)}
	go func() { r.err <- h.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-r.err; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("replica %s: Run: %v", dir, err)
		}
	})
	t.Cleanup(stop)
	return r, stop
}

// serving waits until the replica wrote hub.addr, failing if Run returns.
func (r *replica) serving(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(replicaTimeout)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(filepath.Join(r.dir, hub.AddrFile)); err == nil {
			r.addr = strings.TrimSpace(string(data))
			return
		}
		select {
		case err := <-r.err:
			r.err <- err
			t.Fatalf("replica %s stopped during start-up: %v", r.dir, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("replica %s wrote no %s within %s", r.dir, hub.AddrFile, replicaTimeout)
}

// refused waits for Run to fail and returns its error.
func (r *replica) refused(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.err:
		r.err <- nil // for the cleanup: the failure is this test's subject
		if err == nil {
			t.Fatalf("replica %s: Run returned nil; want a refusal", r.dir)
		}
		return err
	case <-time.After(replicaTimeout):
		t.Fatalf("replica %s still running after %s; want it refused", r.dir, replicaTimeout)
		return nil
	}
}

// adminConf reads the replica's admin.conf.
func (r *replica) adminConf(t *testing.T) *clientconfig.Config {
	t.Helper()
	c, err := clientconfig.Load(filepath.Join(r.dir, hub.AdminConfFile))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// registerAgent creates a bootstrap token through r's client API and
// registers cluster through r's AgentService; it returns the agent's
// certificate.
func (r *replica) registerAgent(t *testing.T, ctx context.Context, cluster string) tls.Certificate {
	t.Helper()
	admin := r.adminConf(t)
	adminTLS, err := admin.TLS()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := hubv1.NewTokenServiceClient(dial(t, r.addr, adminTLS)).CreateToken(ctx, &hubv1.CreateTokenRequest{ClusterName: cluster})
	if err != nil {
		t.Fatalf("CreateToken through %s: %v", r.addr, err)
	}
	csrPEM, keyPEM, err := certs.NewCSR(cluster)
	if err != nil {
		t.Fatal(err)
	}
	anon := &tls.Config{RootCAs: adminTLS.RootCAs, MinVersion: tls.VersionTLS12}
	resp, err := agentv1.NewAgentServiceClient(dial(t, r.addr, anon)).Register(ctx, &agentv1.RegisterRequest{
		Token: tok.GetToken(), ClusterName: cluster, CsrPem: csrPEM, AgentVersion: "test"})
	if err != nil {
		t.Fatalf("Register %s through %s: %v", cluster, r.addr, err)
	}
	cert, err := tls.X509KeyPair(resp.GetCertificatePem(), keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// connectAgent opens cert's agent stream to r, trusting r's CA, and
// returns the hub identity r welcomes it with.
func (r *replica) connectAgent(t *testing.T, ctx context.Context, cert tls.Certificate) (string, error) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(r.adminConf(t).CertificateAuthority))
	conn := dial(t, r.addr, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	stream, err := agentv1.NewAgentServiceClient(conn).Connect(ctx)
	if err != nil {
		return "", err
	}
	hello := &agentv1.Hello{AgentVersion: "test"}
	if err := stream.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: hello}}); err != nil {
		return "", err
	}
	m, err := stream.Recv()
	if err != nil {
		return "", err
	}
	if m.GetWelcome() == nil {
		t.Fatalf("first message from %s = %v; want Welcome", r.addr, m)
	}
	return m.GetWelcome().GetHubIdentity(), nil
}

func dial(t *testing.T, addr string, cfg *tls.Config) *grpc.ClientConn {
	t.Helper()
	cfg.ServerName = "127.0.0.1"
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// writeEncryptionKey writes a new CA encryption key file.
func writeEncryptionKey(t *testing.T) string {
	t.Helper()
	key := make([]byte, pki.EncryptionKeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca-encryption-key")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeCA writes a new CA's files and returns their paths and its hash.
func writeCA(t *testing.T) (certFile, keyFile, hash string) {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"), ca.Hash()
}

// TestReplicasShareOneCA: two replicas on one TLS-only etcd, given one CA
// as files or sharing the one the first created in etcd, sign with the same
// CA: an agent registered through replica 1 streams from replica 2, and
// both give it the same hub identity. A replica with another CA is refused
// with both hashes named.
func TestReplicasShareOneCA(t *testing.T) {
	t.Run("files", func(t *testing.T) {
		e := etcdtest.Start(t, etcdtest.Options{TLS: true})
		certFile, keyFile, hash := writeCA(t)
		withFiles := func() hub.Config {
			cfg := baseConfig(t, e)
			cfg.CACertFile, cfg.CAKeyFile = certFile, keyFile
			return cfg
		}
		first, second := sharedReplicas(t, withFiles(), withFiles())
		for _, r := range []*replica{first, second} {
			if got := caHash(t, r); got != hash {
				t.Errorf("replica %s serves CA %s; want the given %s", r.dir, got, hash)
			}
		}
		otherCert, otherKey, otherHash := writeCA(t)
		other := baseConfig(t, e)
		other.CACertFile, other.CAKeyFile = otherCert, otherKey
		wantRefused(t, runReplica(t, other).refused(t), otherHash, hash)
	})
	t.Run("sealed in etcd", func(t *testing.T) {
		e := etcdtest.Start(t, etcdtest.Options{TLS: true})
		keyFile := writeEncryptionKey(t)
		withKey := func() hub.Config {
			cfg := baseConfig(t, e)
			cfg.CAEncryptionKeyFile = keyFile
			return cfg
		}
		first, _ := sharedReplicas(t, withKey(), withKey())
		hash := caHash(t, first)

		wrongKey := baseConfig(t, e)
		wrongKey.CAEncryptionKeyFile = writeEncryptionKey(t)
		if err := runReplica(t, wrongKey).refused(t); !strings.Contains(err.Error(), "decrypt") {
			t.Errorf("replica with another encryption key: %v; want a decryption error", err)
		}
		otherCert, otherKey, otherHash := writeCA(t)
		files := baseConfig(t, e)
		files.CACertFile, files.CAKeyFile = otherCert, otherKey
		wantRefused(t, runReplica(t, files).refused(t), otherHash, hash)
		if err := runReplica(t, baseConfig(t, e)).refused(t); !strings.Contains(err.Error(), hash) {
			t.Errorf("replica with an empty data dir: %v; want a refusal naming %s", err, hash)
		}
	})
	t.Run("data dir", func(t *testing.T) {
		e := etcdtest.Start(t, etcdtest.Options{TLS: true})
		first := runReplica(t, baseConfig(t, e))
		first.serving(t)
		hash := caHash(t, first)
		// A second replica that creates its own CA in its data dir (the
		// single-process default) is refused.
		second := baseConfig(t, e)
		if err := os.MkdirAll(filepath.Join(second.DataDir, hub.PKIDir), 0o700); err != nil {
			t.Fatal(err)
		}
		own, err := pki.LoadOrCreateCA(filepath.Join(second.DataDir, hub.PKIDir))
		if err != nil {
			t.Fatal(err)
		}
		wantRefused(t, runReplica(t, second).refused(t), own.Hash(), hash)
		// Given the first replica's CA files, it starts.
		third := baseConfig(t, e)
		third.CACertFile = filepath.Join(first.dir, hub.PKIDir, "ca.crt")
		third.CAKeyFile = filepath.Join(first.dir, hub.PKIDir, "ca.key")
		runReplica(t, third).serving(t)
	})
}

// sharedReplicas starts two replicas one after the other and checks that
// an agent registered through the first streams from the second.
func sharedReplicas(t *testing.T, cfg1, cfg2 hub.Config) (*replica, *replica) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), replicaTimeout)
	defer cancel()
	first := runReplica(t, cfg1)
	first.serving(t)
	second := runReplica(t, cfg2)
	second.serving(t)
	if h1, h2 := caHash(t, first), caHash(t, second); h1 != h2 {
		t.Fatalf("replicas serve CAs %s and %s; want one", h1, h2)
	}
	cert := first.registerAgent(t, ctx, "edge-1")
	id2, err := second.connectAgent(t, ctx, cert)
	if err != nil {
		t.Fatalf("agent registered through replica 1 connects to replica 2: %v; want Welcome", err)
	}
	id1, err := first.connectAgent(t, ctx, cert)
	if err != nil || id1 != id2 {
		t.Errorf("hub identity from replica 1 = %q, %v; want replica 2's %q", id1, err, id2)
	}
	return first, second
}

func caHash(t *testing.T, r *replica) string {
	t.Helper()
	cert, err := certs.ParseCertificate([]byte(r.adminConf(t).CertificateAuthority))
	if err != nil {
		t.Fatal(err)
	}
	return certs.Hash(cert)
}

func wantRefused(t *testing.T, err error, own, recorded string) {
	t.Helper()
	for _, want := range []string{own, recorded, "--ca-cert", "--ca-encryption-key-file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %s", err, want)
		}
	}
	t.Logf("refused: %v", err)
}

// TestUnreachableEtcdFailsTheStart: a hub pointed at an etcd nobody
// listens on stops with an error naming the endpoint, instead of hanging.
func TestUnreachableEtcdFailsTheStart(t *testing.T) {
	cfg := hub.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", EtcdEndpoints: []string{"http://127.0.0.1:1"}}
	err := runReplica(t, cfg).refused(t)
	if !strings.Contains(err.Error(), "http://127.0.0.1:1") {
		t.Errorf("Run with an unreachable etcd: %v; want an error naming http://127.0.0.1:1", err)
	}
}

// TestNewerStoreFormatIsRefused: a replica on a store whose format a newer
// version wrote (beyond the adjacent one) stops with an error saying so,
// instead of misreading it.
func TestNewerStoreFormatIsRefused(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{TLS: true})
	cfg := baseConfig(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTimeout)
	defer cancel()
	st, err := store.Open(ctx, store.Config{Endpoints: cfg.EtcdEndpoints, TLS: cfg.EtcdTLS}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	newer := strconv.Itoa(store.Format + 1)
	_, err = st.Put(ctx, store.FormatKey, []byte(newer))
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	err = runReplica(t, cfg).refused(t)
	if !errors.Is(err, store.ErrFormat) || !strings.Contains(err.Error(), "format "+newer) {
		t.Errorf("Run on a store of format %s: %v; want a refusal naming the format", newer, err)
	}
}
