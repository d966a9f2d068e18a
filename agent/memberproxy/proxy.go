package memberproxy

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/backoff"
	"github.com/tetherproj/tether/internal/tunnelconn"
)

// Proxy serves the hub's tunnels to one member.
type Proxy struct {
	conn    *grpc.ClientConn // the proxy's own connection to the hub
	handler http.Handler
	mode    Mode
	version string
	log     hclog.Logger
	// retry is the wait before listening again after the Listen stream
	// ended; the attempt counts streams that ended without an offer.
	retry backoff.Policy
}

// closeGrace is how long a tunnel the agent closed (half-closed: what it
// sent still arrives) waits for the hub to end the stream before the
// agent cancels it.
const closeGrace = 10 * time.Second

// New returns the proxy serving handler over conn, a connection to the
// hub of its own (never the works stream's): bulk proxy data then shares
// no TCP connection with heartbeats and works.
func New(conn *grpc.ClientConn, handler http.Handler, mode Mode, agentVersion string, logger hclog.Logger) *Proxy {
	return &Proxy{conn: conn, handler: handler, mode: mode, version: agentVersion, log: logger.Named("memberproxy"),
		retry: backoff.Policy{Base: time.Second, Max: 30 * time.Second, Jitter: true}}
}

// Run listens for the hub's offers until ctx ends, and serves the tunnels
// it opens; it returns once every tunnel's goroutine has exited.
func (p *Proxy) Run(ctx context.Context) error {
	lis := tunnelconn.NewListener(tunnelconn.Addr("agent"))
	srv := &http.Server{Handler: p.handler, ReadHeaderTimeout: 30 * time.Second, ErrorLog: p.log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(lis) })
	client := agentv1.NewTunnelServiceClient(p.conn)
	for attempt := 0; ctx.Err() == nil; {
		offered, err := p.listen(ctx, client, lis, &wg)
		if ctx.Err() != nil {
			break
		}
		if offered {
			attempt = 0
		}
		wait := p.retry.Delay(attempt)
		attempt++
		p.log.Debug("tunnel listen stream ended; listening again", "error", err, "in", wait)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	srv.Close() // closes the listener and every tunnel the server holds
	wg.Wait()
	return nil
}

// listen holds one Listen stream and opens a tunnel for each offer;
// offered says whether any came.
func (p *Proxy) listen(ctx context.Context, client agentv1.TunnelServiceClient, lis *tunnelconn.Listener, wg *sync.WaitGroup) (offered bool, err error) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := client.Listen(lctx, &agentv1.ListenRequest{AgentVersion: p.version, Mode: string(p.mode)})
	if err != nil {
		return false, err
	}
	for {
		offer, err := stream.Recv()
		if err != nil {
			return offered, err
		}
		offered = true
		wg.Go(func() { p.open(ctx, client, offer.GetTunnelId(), lis) })
	}
}

// open opens the tunnel of one offer and hands it to the HTTP server.
// The tunnel outlives the Listen stream that offered it (a session goes on
// while the control stream reconnects); it ends with Run's ctx at the
// latest.
func (p *Proxy) open(ctx context.Context, client agentv1.TunnelServiceClient, id []byte, lis *tunnelconn.Listener) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := client.Tunnel(ctx)
	if err == nil {
		err = stream.Send(&agentv1.TunnelFrame{TunnelId: id})
	}
	if err != nil {
		cancel()
		p.log.Warn("tunnel not opened", "error", err)
		return
	}
	end := func() {
		_ = stream.CloseSend()
		time.AfterFunc(closeGrace, cancel)
	}
	c := tunnelconn.New(stream, end, tunnelconn.Addr("agent"), tunnelconn.Addr("hub"), nil)
	if err := lis.Offer(ctx, c); err != nil {
		c.Close()
		if !errors.Is(err, context.Canceled) {
			p.log.Debug("tunnel dropped: the proxy is stopping", "error", err)
		}
	}
}
