package security

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/test/proc"
)

// Timeouts of the tests.
const (
	startTimeout = 60 * time.Second
	rpcTimeout   = 30 * time.Second
	// cmdTimeout bounds one tetherctl or tether-agent run that must end by
	// itself.
	cmdTimeout = 60 * time.Second
)

// stopGrace is how long a hub or agent may take to stop after SIGTERM
// before it is killed (and the test fails); the hub's own shutdown grace is
// 10 s.
const stopGrace = 20 * time.Second

// hubProc is one tether-hub process on its own data directory.
type hubProc struct {
	t    *testing.T
	dir  string
	addr string
	p    *proc.Process
	log  string
}

// startHub starts tether-hub on a free loopback port, with flags added,
// and waits for hub.addr; it is stopped when the test ends.
func startHub(t *testing.T, flags ...string) *hubProc {
	t.Helper()
	dir := t.TempDir()
	h := &hubProc{t: t, dir: dir, log: filepath.Join(t.TempDir(), "hub.log")}
	p, err := proc.Start(procs, proc.Config{Name: "tether-hub", Bin: hubBin, LogPath: h.log,
		Args: append([]string{"--data-dir", dir, "--listen", "127.0.0.1:0", "-log-level", "debug"}, flags...)})
	if err != nil {
		t.Fatal(err)
	}
	h.p = p
	proc.StopAtEnd(t, p, stopGrace)
	poll(t, startTimeout, "hub.addr written", func() (bool, string) {
		if p.Exited() {
			t.Fatal(p.ExitError())
		}
		data, err := os.ReadFile(filepath.Join(dir, "hub.addr"))
		h.addr = strings.TrimSpace(string(data))
		return err == nil && h.addr != "", ""
	})
	return h
}

func (h *hubProc) adminConf() string { return filepath.Join(h.dir, "admin.conf") }

// ctl runs tetherctl with config and returns stdout, stderr and the exit
// code.
func ctl(t *testing.T, config string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, ctlBin, append([]string{"--config", config}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("tetherctl %v: %v", args, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// mustCtl runs tetherctl and fails the test unless it exits 0.
func mustCtl(t *testing.T, config string, args ...string) string {
	t.Helper()
	out, errOut, code := ctl(t, config, args...)
	if code != 0 {
		t.Fatalf("tetherctl %v: exit %d: %s", args, code, errOut)
	}
	return out
}

// token is the output of `tetherctl token create -o json`.
type token struct {
	Token   string `json:"token"`
	CAHash  string `json:"caHash"`
	Expires string `json:"expires"`
}

func createToken(t *testing.T, h *hubProc, args ...string) token {
	t.Helper()
	out := mustCtl(t, h.adminConf(), append([]string{"token", "create", "-o", "json"}, args...)...)
	var tok token
	if err := json.Unmarshal([]byte(out), &tok); err != nil || tok.Token == "" || !strings.HasPrefix(tok.CAHash, "sha256:") {
		t.Fatalf("token create -o json = %q (%v); want token, caHash and expires", out, err)
	}
	if _, err := time.Parse(time.RFC3339, tok.Expires); err != nil {
		t.Errorf("expires %q: %v; want RFC 3339", tok.Expires, err)
	}
	return tok
}

// registration is a key and what Register gave for it.
type registration struct {
	keyPEM, certPEM []byte
	caPool          *x509.CertPool
}

// register calls Register like an agent: the hub's CA taken from its chain
// and pinned by hash, a new key unless key is given.
func register(t *testing.T, h *hubProc, tok token, cluster string, keyPEM []byte) (registration, error) {
	t.Helper()
	return registerFrom(t, h, tok, cluster, keyPEM, "")
}

// registerFrom is register over a connection from source address ip (any
// of 127.0.0.0/8 on Linux; "" for the system's choice).
func registerFrom(t *testing.T, h *hubProc, tok token, cluster string, keyPEM []byte, ip string) (registration, error) {
	t.Helper()
	return registerKey(t, h, tok, cluster, keyPEM, ip, nil)
}

// registerTopology is register from ip with a new key and topology.
func registerTopology(t *testing.T, h *hubProc, tok token, cluster, ip string, topology *agentv1.Topology) (registration, error) {
	t.Helper()
	return registerKey(t, h, tok, cluster, nil, ip, topology)
}

func registerKey(t *testing.T, h *hubProc, tok token, cluster string, keyPEM []byte, ip string, topology *agentv1.Topology) (registration, error) {
	t.Helper()
	if keyPEM == nil {
		var err error
		if _, keyPEM, err = certs.NewCSR(cluster); err != nil {
			t.Fatal(err)
		}
	}
	key, err := certs.ParsePrivateKey(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	pool := pinnedPool(t, h.addr, tok.CAHash)
	conn := dialFrom(t, h.addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}, ip)
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	resp, err := agentv1.NewAgentServiceClient(conn).Register(ctx, &agentv1.RegisterRequest{
		Token: tok.Token, ClusterName: cluster, CsrPem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
		Topology: topology,
	})
	if err != nil {
		return registration{}, err
	}
	return registration{keyPEM: keyPEM, certPEM: resp.GetCertificatePem(), caPool: pool}, nil
}

// pinnedPool fetches the hub's chain and returns a pool of the chain's CA
// whose hash is pin.
func pinnedPool(t *testing.T, addr, pin string) *x509.CertPool {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, c := range conn.ConnectionState().PeerCertificates[1:] {
		if certs.Hash(c) == pin {
			pool := x509.NewCertPool()
			pool.AddCert(c)
			return pool
		}
	}
	t.Fatalf("the hub's chain holds no CA with hash %s", pin)
	return nil
}

// tlsConfig is the client TLS of r's certificate.
func (r registration) tlsConfig(t *testing.T) *tls.Config {
	t.Helper()
	cert, err := tls.X509KeyPair(r.certPEM, r.keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: r.caPool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// userTLS is the client TLS of a config file.
func userTLS(t *testing.T, path string) *tls.Config {
	t.Helper()
	cfg, err := clientconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := cfg.TLS()
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

func dial(t *testing.T, addr string, tc *tls.Config) *grpc.ClientConn {
	t.Helper()
	return dialFrom(t, addr, tc, "")
}

// dialFrom is dial from source address ip ("" for the system's choice).
func dialFrom(t *testing.T, addr string, tc *tls.Config, ip string) *grpc.ClientConn {
	t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(tc))}
	if ip != "" {
		dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		opts = append(opts, grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", addr)
		}))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func poll(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last: %s)", what, timeout, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func rpcCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	t.Cleanup(cancel)
	return ctx
}

// certsNewCSR makes a new key (and a request the tests ignore).
func certsNewCSR() ([]byte, []byte, error) { return certs.NewCSR("x") }
