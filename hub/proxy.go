package hub

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/tetherproj/tether/hub/pki"
)

// serveProxy serves the member proxy (hub/memberproxy) over HTTPS on lis
// until ctx ends: the gRPC port's serving certificate, users' client
// certificates of the hub CA (the handler refuses requests without one).
// At the end, requests get shutdownGrace to finish; upgraded sessions
// (exec, port-forward) are not drained: they end with their tunnels when
// the gRPC server stops.
func (a *api) serveProxy(lis net.Listener, ca *pki.CA) func(ctx context.Context) error {
	tlsCfg := serverTLS(ca, a.cert)
	tlsCfg.NextProtos = []string{"h2", "http/1.1"} // upgrades come over HTTP/1.1 (client-go asks for it)
	srv := &http.Server{Handler: a.proxy, TLSConfig: tlsCfg, ReadHeaderTimeout: 10 * time.Second}
	return func(ctx context.Context) error {
		errc := make(chan error, 1)
		go func() { errc <- srv.ServeTLS(lis, "", "") }()
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
