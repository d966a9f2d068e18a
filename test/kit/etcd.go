package kit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tetherproj/tether/test/proc"
)

// portAttempts is how many times a server is started on a fresh port when the
// one picked was taken in the meantime (another process can grab a port
// between freePort closing it and the server binding it).
const portAttempts = 3

// errPortInUse marks a server that exited because its port was taken.
var errPortInUse = errors.New("port in use")

// freePorts returns n distinct TCP ports on 127.0.0.1 that were free a moment
// ago (all n listeners are open at once, so no port is handed out twice).
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// diedOfPortInUse tells whether p exited because its port was taken.
func diedOfPortInUse(p *process) bool {
	return p.Exited() && strings.Contains(proc.FileTail(p.LogPath(), proc.TailLines), "address already in use")
}

// withFreePorts runs start with n fresh ports, again with new ones if start
// reports errPortInUse.
func withFreePorts(n int, start func(ports []int) error) error {
	var err error
	for range portAttempts {
		var ports []int
		if ports, err = freePorts(n); err != nil {
			return err
		}
		if err = start(ports); !errors.Is(err, errPortInUse) {
			return err
		}
	}
	return err
}

// startEtcd starts the etcd that all clusters of the Env share, and waits
// until it is healthy.
func (e *Env) startEtcd(ctx context.Context) error {
	return withFreePorts(2, func(ports []int) error {
		client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		args := []string{
			"--name=kit",
			"--data-dir=" + filepath.Join(e.Dir, "etcd"),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=kit=" + peer,
			"--unsafe-no-fsync", // test data: durability buys nothing, fsync costs start-up time
			"--log-level=warn",
		}
		p, err := e.startProcess("", binEtcd, e.Dir, args)
		if err != nil {
			return err
		}
		if err := waitEtcd(ctx, p, client); err != nil {
			if diedOfPortInUse(p) {
				return fmt.Errorf("etcd ports %v: %w", ports, errPortInUse)
			}
			return err
		}
		e.EtcdURL = client
		return nil
	})
}

// waitEtcd polls etcd's /health until it reports healthy.
func waitEtcd(ctx context.Context, p *process, url string) error {
	hc := &http.Client{Timeout: time.Second}
	return proc.Poll(ctx, pollFast, func(ctx context.Context) error {
		if p.Exited() {
			return proc.Permanent(p.ExitError())
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
		if err != nil {
			return proc.Permanent(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("etcd health: %w", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
			return fmt.Errorf("etcd health: %s: %s", resp.Status, body)
		}
		return nil
	})
}
