package agent

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
)

// TestMetricsServer: /metrics serves the agent's registry until the
// context ends, then Run returns nil.
func TestMetricsServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	reg := newRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "tether_agent_member_deletes_total", Help: "test"})
	reg.MustRegister(c)
	c.Inc()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- (&httpServer{flag: "--metrics-addr", addr: addr, handler: metricsHandler(reg), log: hclog.NewNullLogger()}).Run(ctx)
	}()
	var body string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(body, "tether_agent_member_deletes_total 1") {
		t.Errorf("GET /metrics = %q; want the counter", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v; want nil after cancel", err)
	}
}
