// Package pprofserve serves Go's profiles (net/http/pprof) on an address of its
// own, for the commands' --pprof-addr flag (tether-hub, tether-agent). Plain
// HTTP that shows the process's memory: only that flag starts it.
package pprofserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/hashicorp/go-hclog"
)

// pprofShutdownTimeout bounds the wait for profile requests in progress
// when the process stops (a CPU profile runs for its ?seconds=).
const shutdownTimeout = 2 * time.Second

// Serve serves Go's profiles on addr (plain HTTP, /debug/pprof/) until
// the returned stop is called, which waits for the server to end. Only
// --pprof-addr starts it: profiles show the process's memory.
func Serve(addr string, logger hclog.Logger) (stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("pprof server ended", "error", err)
		}
	}()
	logger.Info("serving profiles", "addr", l.Addr().String(), "path", "/debug/pprof/")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		srv.Shutdown(ctx) //nolint:errcheck // past the timeout, Close below
		srv.Close()
		<-done
	}, nil
}
