package kit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tetherproj/tether/test/proc"
)

// Client rate limits of the configs RESTConfig returns (requests per second
// and burst). client-go's defaults (5/10) make tests that create many objects
// crawl; the kit's API servers are local and idle.
const (
	clientQPS   = 100
	clientBurst = 200
)

// Cluster is one running member cluster.
type Cluster struct {
	Name   string
	Labels map[string]string // from ClusterSpec.Labels

	// Server is the API server's URL, https://127.0.0.1:<port>.
	Server string

	// KubeconfigPath is an admin kubeconfig for the cluster, with the
	// context, cluster and user all named Name.
	KubeconfigPath string

	// CAData is the PEM certificate clients must trust (the API server's
	// self-signed serving certificate).
	CAData []byte

	// Token is the admin bearer token (user tether-kit-admin, group
	// system:masters).
	Token string

	// Dir holds the cluster's certificates, configuration and logs.
	Dir string

	env    *Env
	spec   ClusterSpec
	logger hclog.Logger
	port   int

	mu        sync.Mutex // guards apiserver
	apiserver *process   // the running API server, nil while stopped
}

func newCluster(e *Env, spec ClusterSpec) *Cluster {
	dir := filepath.Join(e.Dir, spec.Name)
	return &Cluster{
		Name:           spec.Name,
		Labels:         spec.Labels,
		KubeconfigPath: filepath.Join(dir, fileKubeconfig),
		Dir:            dir,
		env:            e,
		spec:           spec,
		logger:         e.logger.Named(spec.Name),
	}
}

// start brings the cluster up: API server, nodes, then controller manager,
// scheduler and kwok together, and waits until the cluster can run pods.
func (c *Cluster) start(ctx context.Context) error {
	begin := time.Now()
	if err := c.writeConfig(); err != nil {
		return fmt.Errorf("write configuration: %w", err)
	}
	err := withFreePorts(1, func(ports []int) error {
		c.port = ports[0]
		c.Server = "https://127.0.0.1:" + strconv.Itoa(c.port)
		if err := c.writeKubeconfig(); err != nil {
			return fmt.Errorf("write kubeconfig: %w", err)
		}
		return c.StartAPIServer(ctx)
	})
	if err != nil {
		return err
	}
	c.logger.Debug("api server ready", "server", c.Server, "elapsed", time.Since(begin).Round(time.Millisecond))
	if err := c.AddNodes(ctx, c.spec.Nodes...); err != nil {
		return err
	}
	procs, err := c.startControllers()
	if err != nil {
		return err
	}
	if err := c.waitReady(ctx, procs); err != nil {
		return err
	}
	c.logger.Info("cluster ready", "server", c.Server, "kubeconfig", c.KubeconfigPath, "elapsed", time.Since(begin).Round(time.Millisecond))
	return nil
}

// startControllers starts the controller manager, the scheduler and kwok.
func (c *Cluster) startControllers() ([]*process, error) {
	kwokArgs := c.kwokArgs()
	if c.spec.KubeletServer {
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		kwokArgs = append(kwokArgs, c.kubeletArgs(ports[0])...)
	}
	var procs []*process
	for _, s := range []struct {
		bin  string
		args []string
		env  []string
	}{
		{binController, c.controllerManagerArgs(), nil},
		{binScheduler, c.schedulerArgs(), nil},
		{binKwok, kwokArgs, c.kwokEnv()},
	} {
		p, err := c.env.startProcess(c.Name, s.bin, c.Dir, s.args, s.env...)
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// StartAPIServer starts the cluster's API server again after StopAPIServer,
// on the same address, and waits until it is ready. Objects survive (they are
// in etcd). Fault tests use it to take a member's API away and give it back.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.apiserver != nil && !c.apiserver.Exited() {
		return fmt.Errorf("cluster %s: api server already running", c.Name)
	}
	p, err := c.env.startProcess(c.Name, binAPIServer, c.Dir, c.apiServerArgs(c.port))
	if err != nil {
		return err
	}
	c.apiserver = p
	if err := c.waitAPIServer(ctx, p); err != nil {
		if diedOfPortInUse(p) {
			return fmt.Errorf("cluster %s: api server port %d: %w", c.Name, c.port, errPortInUse)
		}
		return err
	}
	return nil
}

// StopAPIServer kills the cluster's API server (SIGKILL, as if it crashed)
// and waits until it has exited. The other components keep running and retry
// until StartAPIServer. A graceful stop would take seconds, waiting for the
// components' watches to drain, and fault tests want the crash anyway.
func (c *Cluster) StopAPIServer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.apiserver != nil {
		c.apiserver.Stop(0)
		c.apiserver = nil
	}
}

// waitAPIServer polls /readyz until the API server reports ready.
func (c *Cluster) waitAPIServer(ctx context.Context, p *process) error {
	hc, err := rest.HTTPClientFor(c.RESTConfig())
	if err != nil {
		return err
	}
	hc.Timeout = 2 * time.Second
	return proc.Poll(ctx, pollFast, func(ctx context.Context) error {
		if p.Exited() {
			return proc.Permanent(p.ExitError())
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Server+"/readyz", nil)
		if err != nil {
			return proc.Permanent(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("readyz: %w", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz: %s: %s", resp.Status, body)
		}
		return nil
	})
}

// RESTConfig returns a new admin client configuration for the cluster.
func (c *Cluster) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            c.Server,
		BearerToken:     c.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData},
		QPS:             clientQPS,
		Burst:           clientBurst,
	}
}

// Clientset returns an admin clientset for the cluster.
func (c *Cluster) Clientset() *kubernetes.Clientset {
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil { // only an invalid config fails, and RESTConfig's is valid
		panic(fmt.Sprintf("kit: clientset for %s: %v", c.Name, err))
	}
	return cs
}

// Dynamic returns an admin dynamic client for the cluster.
func (c *Cluster) Dynamic() *dynamic.DynamicClient {
	dc, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil { // only an invalid config fails, and RESTConfig's is valid
		panic(fmt.Sprintf("kit: dynamic client for %s: %v", c.Name, err))
	}
	return dc
}
