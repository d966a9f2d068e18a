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

// serverShutdownTimeout bounds the wait for requests in flight (scrapes,
// probes) when the agent stops.
const serverShutdownTimeout = 5 * time.Second

// serverReadHeaderTimeout bounds a request's headers.
const serverReadHeaderTimeout = 10 * time.Second

// newRegistry is the agent's own Prometheus registry (no global state):
// the Go and process collectors, and whatever the parts register
// (hubclient: the stream, the works held, applied and deleted, the status
// reports' lag; agent/apply: the objects it deleted and orphaned, by
// reason).
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// metricsHandler serves reg on /metrics.
func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// httpServer serves handler at addr, named by flag (--metrics-addr,
// --health-addr) in its errors.
type httpServer struct {
	flag    string
	addr    string
	handler http.Handler
	log     hclog.Logger
}

// Run serves until ctx ends, then shuts the server down and returns nil;
// it returns at once when the address cannot be listened on.
func (m *httpServer) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", m.addr)
	if err != nil {
		return fmt.Errorf("%s: %w", m.flag, err)
	}
	srv := &http.Server{Handler: m.handler, ReadHeaderTimeout: serverReadHeaderTimeout}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	m.log.Info("serving", "flag", m.flag, "addr", ln.Addr().String())
	select {
	case err := <-done:
		return fmt.Errorf("%s server: %w", m.flag, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), serverShutdownTimeout)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s server: %w", m.flag, err)
	}
	return nil
}
