package main

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
// when the agent stops (a CPU profile runs for its ?seconds=).
const pprofShutdownTimeout = 2 * time.Second

// pprofMemProfileRate is the heap profile's sampling interval while
// --pprof-addr is set, in bytes allocated per sample: Go's default, 512 KiB,
// leaves an agent's heap of some 10 MB with a few dozen samples.
const pprofMemProfileRate = 16 << 10

// servePprof serves Go's profiles on addr (plain HTTP, /debug/pprof/) until
// the returned stop is called, which waits for the server to end. Only
// --pprof-addr starts it: profiles show the agent's memory.
func servePprof(addr string, logger hclog.Logger) (stop func(), err error) {
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
		ctx, cancel := context.WithTimeout(context.Background(), pprofShutdownTimeout)
		defer cancel()
		srv.Shutdown(ctx) //nolint:errcheck // past the timeout, Close below
		srv.Close()
		<-done
	}, nil
}
