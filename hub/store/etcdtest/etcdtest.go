// Package etcdtest starts a real etcd process for tests: the kit's etcd
// binary ($TETHER_KIT_BIN/etcd, else test/.cache/bin/etcd in the
// repository, built by `make kit-bins`), on 127.0.0.1 ports, in a
// temporary directory, optionally serving clients over TLS only and
// requiring client certificates. The process is killed when the test ends.
//
//	e := etcdtest.Start(t, etcdtest.Options{TLS: true})
//	store.Open(ctx, store.Config{Endpoints: e.Endpoints, TLS: store.TLS{CAFile: e.CAFile, CertFile: e.CertFile, KeyFile: e.KeyFile}}, logger)
//
// Embedded opens a store on an embedded etcd instead, for tests that need
// no process of their own.
//
// It imports the etcd client, hub/store, test/proc (the repository root)
// and the standard library.
package etcdtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/tetherproj/tether/test/proc"
)

const (
	// startTimeout bounds how long etcd may take to serve its first
	// request; it takes about a second on a loaded two-core machine.
	startTimeout = 60 * time.Second
	// pollInterval is how often readiness is checked during start-up.
	pollInterval = 100 * time.Millisecond
	// attempts is how many times etcd is started on fresh ports when the
	// ones picked were taken meanwhile.
	attempts = 3
)

// Options say how etcd serves.
type Options struct {
	// TLS makes etcd serve clients over TLS only and require a client
	// certificate signed by its CA.
	TLS bool
}

// Etcd is a running etcd process.
type Etcd struct {
	// Endpoints are its client URLs (https:// with TLS).
	Endpoints []string
	// CAFile, CertFile and KeyFile, with TLS: the CA that signed etcd's
	// serving certificate and a client certificate and key etcd accepts.
	CAFile, CertFile, KeyFile string
	dir                       string
}

// Binary returns the path of the kit's etcd binary, failing the test with
// how to build it when it is missing.
func Binary(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("TETHER_KIT_BIN")
	if dir == "" {
		root, err := proc.RepoRoot()
		if err != nil {
			t.Fatalf("etcd binary: %v; set TETHER_KIT_BIN", err)
		}
		dir = filepath.Join(root, "test", ".cache", "bin")
	}
	bin := filepath.Join(dir, "etcd")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("etcd binary: %v: run `make kit-bins` in the repository root or set TETHER_KIT_BIN", err)
	}
	return bin
}

// Start starts etcd and waits until it serves a request.
func Start(t testing.TB, opts Options) *Etcd {
	t.Helper()
	e := &Etcd{dir: t.TempDir()}
	if opts.TLS {
		e.writeCerts(t)
	}
	var err error
	for range attempts {
		if err = e.start(t, Binary(t), opts); err == nil {
			return e
		}
	}
	t.Fatalf("start etcd: %v", err)
	return nil
}

// ClientTLS is the client configuration that etcd accepts (nil without
// TLS).
func (e *Etcd) ClientTLS(t testing.TB) *tls.Config {
	t.Helper()
	if e.CAFile == "" {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(e.CertFile, e.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(e.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// start runs one attempt on fresh ports.
func (e *Etcd) start(t testing.TB, bin string, opts Options) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	scheme := "http"
	if opts.TLS {
		scheme = "https"
	}
	client := scheme + "://127.0.0.1:" + strconv.Itoa(ports[0])
	peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	args := []string{
		"--name=test", "--data-dir=" + filepath.Join(e.dir, "data-"+strconv.Itoa(ports[0])),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=test=" + peer, "--unsafe-no-fsync", "--log-level=warn",
	}
	if opts.TLS {
		args = append(args, "--cert-file="+e.file("server.crt"), "--key-file="+e.file("server.key"),
			"--trusted-ca-file="+e.CAFile, "--client-cert-auth")
	}
	logPath := filepath.Join(e.dir, "etcd-"+strconv.Itoa(ports[0])+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	stop := func() { _ = cmd.Process.Kill(); <-exited }
	e.Endpoints = []string{client}
	if err := e.waitReady(t, exited); err != nil {
		stop()
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("%w; etcd log:\n%s", err, tail(string(log), 20))
	}
	t.Cleanup(stop)
	return nil
}

// waitReady polls with a Get until etcd answers, the process exits or
// startTimeout passes.
func (e *Etcd) waitReady(t testing.TB, exited <-chan struct{}) error {
	c, err := clientv3.New(clientv3.Config{Endpoints: e.Endpoints, TLS: e.ClientTLS(t), DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer c.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Get(ctx, "health")
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("etcd exited during start-up (last: %v)", err)
		case <-time.After(pollInterval):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd not ready after %s: %w", startTimeout, err)
		}
	}
}

func (e *Etcd) file(name string) string { return filepath.Join(e.dir, name) }

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
