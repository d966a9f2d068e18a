package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsShutdownTimeout bounds the wait for scrapes in flight when the
// agent stops.
const metricsShutdownTimeout = 5 * time.Second

// metricsReadHeaderTimeout bounds a scrape's request headers.
const metricsReadHeaderTimeout = 10 * time.Second

// newRegistry is the agent's own Prometheus registry (no global state):
// the Go and process collectors, and whatever the member side registers
// (agent/apply: the objects it deleted and orphaned, by reason).
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// metricsServer serves a registry on /metrics at addr (--metrics-addr).
type metricsServer struct {
	addr string
	reg  *prometheus.Registry
	log  hclog.Logger
}

// Run serves until ctx ends, then shuts the server down and returns nil;
// it returns at once when the address cannot be listened on.
func (m *metricsServer) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", m.addr)
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: metricsReadHeaderTimeout}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	m.log.Info("serving metrics", "addr", ln.Addr().String())
	select {
	case err := <-done:
		return fmt.Errorf("metrics server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), metricsShutdownTimeout)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics server: %w", err)
	}
	return nil
}
