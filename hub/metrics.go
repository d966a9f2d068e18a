package hub

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/authority"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/store"
)

// storeSizeTimeout bounds the store query of one scrape.
const storeSizeTimeout = 2 * time.Second

// metrics are the hub's Prometheus metrics, in a registry of their own (no
// global state): RPCs by method and code, works and deletions sent to
// agents, live agent streams, clusters by lease state, full disruption and
// pauses noticed, and the store's key count and size.
type metrics struct {
	registry    *prometheus.Registry
	rpcs        *prometheus.CounterVec
	rpcSeconds  *prometheus.HistogramVec
	workUpserts prometheus.Counter
	workDeletes prometheus.Counter
	// ready is what /readyz reports: set once the gRPC port serves, cleared
	// when the hub stops.
	ready atomic.Bool
}

func newMetrics(streams func() int, leases *liveness.Leases, st *store.Store, counts *guard.Counts, auth *authority.Authority, disrupted func() bool, lead leadership) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		rpcs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tether_hub_grpc_requests_total", Help: "gRPC calls handled, by method and status code.",
		}, []string{"method", "code"}),
		rpcSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tether_hub_grpc_request_seconds", Help: "Latency of unary gRPC calls, by method.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 8),
		}, []string{"method"}),
		workUpserts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tether_hub_work_upserts_sent_total", Help: "Work upserts sent to agents.",
		}),
		workDeletes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tether_hub_work_deletes_sent_total", Help: "Work deletions sent to agents.",
		}),
	}
	m.registry.MustRegister(m.rpcs, m.rpcSeconds, m.workUpserts, m.workDeletes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "tether_hub_agent_streams", Help: "Agent streams connected to this hub.",
		}, func() float64 { return float64(streams()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "tether_hub_authoritative",
			Help: "1 while the hub may cause deletes in members; 0 after its store was found wiped, replaced or restored, until an operator accepts it (--accept-store-reset).",
		}, func() float64 {
			if ok, _ := auth.Authoritative(); ok {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "tether_hub_full_disruption", Help: "1 while too many clusters are unreachable at once for the hub to fail any over, else 0.",
		}, func() float64 {
			if disrupted() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "tether_hub_leader", Help: "1 while this replica leads (runs the controllers that write decisions), else 0.",
		}, func() float64 {
			if lead.IsLeader() {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "tether_hub_leader_terms_total", Help: "Times this replica was elected leader.",
		}, func() float64 { return float64(lead.Terms()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "tether_hub_pauses_total", Help: "Times the hub noticed it had not been running (SIGSTOP, VM pause) and held lease expiry for one lease.",
		}, func() float64 { n, _ := leases.Pauses(); return float64(n) }),
		&stateCollector{leases: leases, st: st}, &errorCollector{counts: counts})
	return m
}

// leadership is what the metrics read of hub/leader's Elector.
type leadership interface {
	IsLeader() bool
	Terms() uint64
}

var errorsDesc = prometheus.NewDesc("tether_hub_controller_errors_total",
	"Keys skipped after a recovered panic, stored objects that did not decode (last good value kept), and agent reports refused, by component and kind.",
	[]string{"component", "kind"}, nil)

// errorCollector reads the guard counts at scrape time.
type errorCollector struct{ counts *guard.Counts }

func (c *errorCollector) Describe(ch chan<- *prometheus.Desc) { ch <- errorsDesc }

func (c *errorCollector) Collect(ch chan<- prometheus.Metric) {
	events, counts := c.counts.Snapshot()
	for i, e := range events {
		ch <- prometheus.MustNewConstMetric(errorsDesc, prometheus.CounterValue, float64(counts[i]), e.Component, e.Kind)
	}
}

// interceptors count every call and time the unary ones, and count the
// works sent on agent streams.
func (m *metrics) interceptors() []grpc.ServerOption {
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := h(ctx, req)
		m.rpcSeconds.WithLabelValues(info.FullMethod).Observe(time.Since(start).Seconds())
		m.rpcs.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
		return resp, err
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		err := h(srv, &countingStream{ServerStream: ss, m: m})
		m.rpcs.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
		return err
	}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream)}
}

// countingStream counts the work messages a stream sends.
type countingStream struct {
	grpc.ServerStream
	m *metrics
}

func (s *countingStream) SendMsg(msg any) error {
	err := s.ServerStream.SendMsg(msg)
	if hm, ok := msg.(*agentv1.HubMessage); ok && err == nil {
		switch {
		case hm.GetWorkUpsert() != nil:
			s.m.workUpserts.Inc()
		case hm.GetWorkDelete() != nil:
			s.m.workDeletes.Inc()
		}
	}
	return err
}

var (
	clustersDesc = prometheus.NewDesc("tether_hub_clusters", "Clusters known to this hub's leases, by state.", []string{"state"}, nil)
	keysDesc     = prometheus.NewDesc("tether_hub_store_keys", "Keys the hub holds in etcd.", nil, nil)
	dbDesc       = prometheus.NewDesc("tether_hub_store_db_bytes", "Size of the etcd database, bytes.", nil, nil)
)

// stateCollector reads leases and the store's size at scrape time.
type stateCollector struct {
	leases *liveness.Leases
	st     *store.Store
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clustersDesc
	ch <- keysDesc
	ch <- dbDesc
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[lease.State]int{lease.StateReady: 0, lease.StateNotReady: 0, lease.StateUnknown: 0}
	leases, _ := c.leases.List()
	for _, l := range leases {
		counts[l.State]++
	}
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(clustersDesc, prometheus.GaugeValue, float64(n), string(state))
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeSizeTimeout)
	defer cancel()
	if keys, db, err := c.st.Size(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(keysDesc, prometheus.GaugeValue, float64(keys))
		ch <- prometheus.MustNewConstMetric(dbDesc, prometheus.GaugeValue, float64(db))
	}
}

// serveHTTP serves /healthz, /readyz and /metrics on lis until ctx ends.
// /healthz answers while the process serves; /readyz once the gRPC port
// serves and the hub announced itself (admin.conf, hub.addr).
func (m *metrics) serveHTTP(lis net.Listener) func(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !m.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("/metrics", promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return func(ctx context.Context) error {
		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(lis) }()
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		_ = srv.Shutdown(sctx)
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
