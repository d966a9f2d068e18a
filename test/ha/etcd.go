package ha

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/tetherproj/tether/test/proc"
)

// etcdMembers is the size of the suite's etcd cluster: the smallest that
// survives losing a member.
const etcdMembers = 3

// etcdReadyTimeout bounds the cluster's start-up: a few seconds on two
// idle cores; the margin is for a loaded machine.
const etcdReadyTimeout = time.Minute

// etcdStopGrace is how long an etcd member may take to exit on SIGTERM.
const etcdStopGrace = 5 * time.Second

// Etcd is a 3-member etcd cluster serving clients over TLS only, with
// client certificates required, as a production hub's would. Its client
// ports listen on every address of the host (so a replica in a network
// namespace reaches them through its link), its peers on 127.0.0.1.
type Etcd struct {
	// Endpoints are the members' client URLs on 127.0.0.1.
	Endpoints []string
	// Ports are the members' client ports, in Endpoints' order.
	Ports []int
	// CA signed the members' serving certificates and the client
	// certificate; CertFile and KeyFile are that client certificate, for
	// the hubs' --etcd-certfile/--etcd-keyfile.
	CA                *CA
	CertFile, KeyFile string
	// MemberDirs are the members' --data-dir, in Endpoints' order.
	MemberDirs []string
	procs      []*proc.Process
	sp         *proc.Spawner
	configs    []proc.Config // to start the members again (Restart)
}

// StartEtcd starts the cluster with its data and logs in dir, its serving
// certificates good for 127.0.0.1 and extraIPs (the host's address on a
// namespace's link), and waits until it serves.
func StartEtcd(ctx context.Context, sp *proc.Spawner, bin, dir string, extraIPs []net.IP) (*Etcd, error) {
	ca, err := NewCA(dir, "etcd-ca")
	if err != nil {
		return nil, err
	}
	ips := append([]net.IP{net.IPv4(127, 0, 0, 1)}, extraIPs...)
	serverCert, serverKey, err := ca.Issue(dir, "etcd-server", ips)
	if err != nil {
		return nil, err
	}
	e := &Etcd{CA: ca, sp: sp}
	if e.CertFile, e.KeyFile, err = ca.Issue(dir, "tether-hub", nil); err != nil {
		return nil, err
	}
	ports, err := FreePorts(2 * etcdMembers)
	if err != nil {
		return nil, err
	}
	var initial []string
	for i := range etcdMembers {
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, ports[etcdMembers+i]))
	}
	for i := range etcdMembers {
		client, peer := ports[i], ports[etcdMembers+i]
		e.Ports = append(e.Ports, client)
		e.Endpoints = append(e.Endpoints, "https://127.0.0.1:"+strconv.Itoa(client))
		args := []string{
			"--name=m" + strconv.Itoa(i), "--data-dir=" + filepath.Join(dir, "m"+strconv.Itoa(i)),
			"--listen-client-urls=https://0.0.0.0:" + strconv.Itoa(client),
			"--advertise-client-urls=https://127.0.0.1:" + strconv.Itoa(client),
			"--listen-peer-urls=http://127.0.0.1:" + strconv.Itoa(peer),
			"--initial-advertise-peer-urls=http://127.0.0.1:" + strconv.Itoa(peer),
			"--initial-cluster=" + strings.Join(initial, ","), "--initial-cluster-state=new",
			"--initial-cluster-token=tether-ha",
			"--cert-file=" + serverCert, "--key-file=" + serverKey, "--trusted-ca-file=" + ca.CertFile, "--client-cert-auth",
			"--unsafe-no-fsync", "--log-level=warn",
		}
		cfg := proc.Config{Name: "etcd m" + strconv.Itoa(i), Bin: bin, Args: args,
			LogPath: filepath.Join(dir, "etcd-m"+strconv.Itoa(i)+".log")}
		e.configs, e.MemberDirs = append(e.configs, cfg), append(e.MemberDirs, filepath.Join(dir, "m"+strconv.Itoa(i)))
		p, err := proc.Start(sp, cfg)
		if err != nil {
			e.Stop()
			return nil, fmt.Errorf("start etcd member %d: %w", i, err)
		}
		e.procs = append(e.procs, p)
	}
	if err := e.waitReady(ctx); err != nil {
		e.Stop()
		return nil, err
	}
	return e, nil
}

// TLS is the client configuration the cluster accepts.
func (e *Etcd) TLS() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(e.CertFile, e.KeyFile)
	if err != nil {
		return nil, err
	}
	pemCA, err := os.ReadFile(e.CA.CertFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemCA)
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// Client returns a client of the cluster; the caller closes it.
func (e *Etcd) Client() (*clientv3.Client, error) {
	tlsCfg, err := e.TLS()
	if err != nil {
		return nil, err
	}
	return clientv3.New(clientv3.Config{Endpoints: e.Endpoints, TLS: tlsCfg, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
}

// HubArgs are the hub flags that reach the cluster at host (127.0.0.1 for
// a replica on the host, the host's link address for one in a namespace).
func (e *Etcd) HubArgs(host string) []string {
	var eps []string
	for _, p := range e.Ports {
		eps = append(eps, "https://"+net.JoinHostPort(host, strconv.Itoa(p)))
	}
	return []string{"--etcd-endpoints", strings.Join(eps, ","),
		"--etcd-cafile", e.CA.CertFile, "--etcd-certfile", e.CertFile, "--etcd-keyfile", e.KeyFile}
}

// waitReady polls with a Get until the cluster answers one (a quorum
// serves), a member exits or ctx ends.
func (e *Etcd) waitReady(ctx context.Context) error {
	c, err := e.Client()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, etcdReadyTimeout)
	defer cancel()
	err = proc.Poll(ctx, 100*time.Millisecond, func(ctx context.Context) error {
		for _, p := range e.procs {
			if p.Exited() {
				return proc.Permanent(p.ExitError())
			}
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := c.Get(cctx, "health")
		return err
	})
	if err != nil {
		return fmt.Errorf("etcd cluster not ready: %w", err)
	}
	return nil
}

// Exited returns why a member ended, or nil while all run.
func (e *Etcd) Exited() error {
	var errs []error
	for _, p := range e.procs {
		if p.Exited() {
			errs = append(errs, p.ExitError())
		}
	}
	return errors.Join(errs...)
}

// Stop ends every member and waits for them.
func (e *Etcd) Stop() {
	for _, p := range e.procs {
		p.Stop(etcdStopGrace)
	}
}

// Restart starts the stopped members again on their data directories (a
// member with data ignores the initial-cluster flags) and waits until the
// cluster serves.
func (e *Etcd) Restart(ctx context.Context) error {
	e.procs = nil
	for i, cfg := range e.configs {
		p, err := proc.Start(e.sp, cfg)
		if err != nil {
			e.Stop()
			return fmt.Errorf("restart etcd member %d: %w", i, err)
		}
		e.procs = append(e.procs, p)
	}
	return e.waitReady(ctx)
}

// FreePorts returns n distinct ports free on every address a moment ago.
func FreePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
