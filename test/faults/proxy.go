package faults

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/tetherproj/tether/test/kit"
)

// Proxy forwards TCP connections from an address the agents' namespaces
// reach (Net.MemberAddr) to a member API server on the host's 127.0.0.1,
// where the kit binds it. It runs in the test process, in the host's
// namespace, so partitions between agents and the hub leave it alone.
type Proxy struct {
	ln     net.Listener
	target string
	delay  atomic.Int64 // nanoseconds each chunk towards the agent waits

	mu     sync.Mutex // guards conns and closed
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup // the accept loop and every copy
}

// NewProxy listens on host:0 and forwards to target (host:port).
func NewProxy(host, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("proxy listen: %w", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's listening address.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil { // the API server is down: so is the connection
			c.Close()
			continue
		}
		if !p.track(c, up) {
			return
		}
		p.wg.Add(2)
		go p.pipe(c, up, true)
		go p.pipe(up, c, false)
	}
}

// track records a connection pair, or closes it if the proxy is closing.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		if p.closed {
			c.Close()
			continue
		}
		p.conns[c] = struct{}{}
	}
	return !p.closed
}

// SetDelay makes every chunk the API server sends towards the agent wait d
// (0: none): the agent's requests reach the server at once, their answers
// late, which holds the agent between a change in its member and the
// answer to it, as long as a test needs to act there.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// proxyChunk is the size of the buffer the proxy copies with, in bytes.
const proxyChunk = 32 << 10

// pipe copies one way, then closes both ends (the other pipe ends too).
// Towards the agent (delayed), each chunk waits SetDelay's duration.
func (p *Proxy) pipe(dst, src net.Conn, delayed bool) {
	defer p.wg.Done()
	buf := make([]byte, proxyChunk)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := time.Duration(p.delay.Load()); delayed && d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Close stops listening, closes every connection and waits for the copies.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// AgentKubeconfig writes a copy of c's admin kubeconfig whose server is
// the proxy, verified as "localhost" (a name of the kit's serving
// certificate), next to the original, and returns its path.
func AgentKubeconfig(c *kit.Cluster, proxyAddr string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(c.KubeconfigPath)
	if err != nil {
		return "", fmt.Errorf("load kubeconfig of %s: %w", c.Name, err)
	}
	cl := cfg.Clusters[c.Name]
	if cl == nil {
		return "", errors.New("kubeconfig of " + c.Name + " has no cluster " + c.Name)
	}
	u := url.URL{Scheme: "https", Host: proxyAddr}
	cl.Server = u.String()
	cl.TLSServerName = "localhost"
	path := filepath.Join(filepath.Dir(c.KubeconfigPath), "agent-kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("write agent kubeconfig of %s: %w", c.Name, err)
	}
	return path, nil
}
