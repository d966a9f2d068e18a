package hub

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/authority"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/memberproxy"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/revocation"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/hub/serving"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/interpreter"
)

// api is the hub's one gRPC port: AgentService for agents, the hub.v1
// services for clients, gRPC health and server reflection; and the
// metrics of all of it.
type api struct {
	server  *grpc.Server
	health  *health.Server
	agents  *agentapi.Server
	metrics *metrics
	cert    *serving.Cert // the serving certificate; its Run re-issues it
	// models follows the clusters' resource models for the agent streams;
	// its Run must run on every replica.
	models *membership.Models
	// revoked follows the revoked users, refused on every call; its Run
	// must run on every replica.
	revoked *revocation.List
	// roles follows the users' stored roles, which every call is decided
	// with; its Run must run on every replica.
	roles *roles.Book
	// proxy is the member proxy's HTTP handler, over the TunnelService
	// this server serves to agents.
	proxy *memberproxy.Handler
}

// apiDeps is what the services are built over.
type apiDeps struct {
	st             *store.Store
	view           *view.View // the replica's view of st
	ca             *pki.CA
	addr, identity string
	interp         *interpreter.Interpreter
	works          agentapi.Works
	statuses       agentapi.Statuses
	leases         *liveness.Leases
	heartbeats     agentapi.Leases // where agents' heartbeats go: the liveness publisher
	registry       *membership.Registry
	authority      *authority.Authority
	counts         *guard.Counts
	disrupted      func() bool // the scheduling loop's full disruption mode
	leader         leadership  // this replica's election
	// customizations is the set of interpreter customizations agents are
	// to hold.
	customizations agentapi.Customizations
}

// newAPI builds the gRPC server with its TLS (a serving certificate for
// d.addr and --tls-san, current at each handshake; client certificates of
// the hub CA optional: Register comes without one) and registers every
// service.
func (h *Hub) newAPI(d apiDeps) (*api, error) {
	models := membership.NewModels(d.view, h.logger)
	agentCfg := agentapi.Config{HubIdentity: d.identity, HubVersion: h.cfg.Version, LeaseDuration: h.cfg.LeaseDuration,
		MaxWorks: h.cfg.MaxWorksPerCluster, Registry: d.registry, Authority: d.authority, Counts: d.counts,
		Customizations: d.customizations, ResourceModels: models, HandshakeTimeout: h.cfg.HandshakeTimeout,
		MaxConnectionIdle: h.cfg.MaxConnectionIdle, MaxConcurrentStreams: h.cfg.MaxStreamsPerConnection,
		RegistrationRate: h.cfg.RegistrationRate, RegistrationBurst: h.cfg.RegistrationBurst}
	agents, err := agentapi.New(agentCfg, d.works, d.statuses, d.heartbeats, h.logger)
	if err != nil {
		return nil, fmt.Errorf("agent service: %w", err)
	}
	revoked, book := revocation.New(d.st, d.view, h.logger), roles.New(d.st, d.view, h.logger)
	clients, err := clientapi.New(clientapi.Config{MaxObjectBytes: h.cfg.MaxObjectBytes, Registry: d.registry, Leases: d.leases,
		Namespaces: h.namespaceFilter(), Revocations: revoked, Roles: book, Scheduling: place.Options{FailoverUnreachable: h.cfg.FailoverUnreachable,
			UnreachableToleration: h.cfg.UnreachableToleration, EvictionTimeout: h.cfg.GracefulEvictionTimeout},
		WatchStall: h.cfg.WatchStallTimeout, OnWatchCut: func() { d.counts.Add("clientapi", clientapi.KindWatchCut) }}, d.st, d.interp, h.logger)
	if err != nil {
		return nil, fmt.Errorf("client api: %w", err)
	}
	cert, err := h.servingCert(d.ca, d.addr)
	if err != nil {
		return nil, err
	}
	m := newMetrics(agents.Streams, d.leases, d.st, d.counts, d.authority, d.disrupted, d.leader)
	opts := append(agentapi.ServerOptions(agentCfg), grpc.Creds(credentials.NewTLS(serverTLS(d.ca, cert))))
	opts = append(opts, recoverPanics(h.logger, d.counts)...)
	opts = append(opts, clientapi.RefuseRevoked(revoked)...)
	opts = append(opts, m.interceptors()...)
	limits := h.cfg.Proxy.WithDefaults()
	tunnels := memberproxy.NewTunnels(d.registry, limits.OpenTimeout, h.logger)
	a := &api{server: grpc.NewServer(opts...), health: health.NewServer(), agents: agents, metrics: m, cert: cert, models: models, revoked: revoked, roles: book,
		proxy: memberproxy.NewHandler(tunnels, clients, revoked, limits, h.logger)}
	agentv1.RegisterAgentServiceServer(a.server, agents)
	agentv1.RegisterTunnelServiceServer(a.server, tunnels)
	clients.Register(a.server)
	healthpb.RegisterHealthServer(a.server, a.health)
	reflection.Register(a.server)
	a.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	return a, nil
}

// servingCert issues the serving certificate of a hub listening on addr:
// valid for its names (servingHosts) and --tls-san, re-issued by its Run.
func (h *Hub) servingCert(ca *pki.CA, addr string) (*serving.Cert, error) {
	return serving.New(ca, serving.Config{Hosts: append(servingHosts(addr), h.cfg.TLSSANs...),
		Lifetime: h.cfg.ServingCertLifetime, RenewAfter: h.servingRenewAfter}, h.logger.Named("serving"))
}

// recoverPanics turns a panic in a gRPC handler into codes.Internal for
// that call alone, logged with the method and counted: one agent's or
// client's data never takes the hub down.
func recoverPanics(logger hclog.Logger, counts *guard.Counts) []grpc.ServerOption {
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		err = guard.Do(logger, counts, "grpc", info.FullMethod, func() error {
			var herr error
			resp, herr = h(ctx, req)
			return herr
		})
		if errors.Is(err, guard.ErrPanicked) {
			return nil, status.Error(codes.Internal, "internal error (logged by the hub)")
		}
		return resp, err
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		err := guard.Do(logger, counts, "grpc", info.FullMethod, func() error { return h(srv, ss) })
		if errors.Is(err, guard.ErrPanicked) {
			return status.Error(codes.Internal, "internal error (logged by the hub)")
		}
		return err
	}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream)}
}

// setReady flips gRPC health and /readyz.
func (a *api) setReady(ready bool) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if ready {
		st = healthpb.HealthCheckResponse_SERVING
	}
	a.health.SetServingStatus("", st)
	a.metrics.ready.Store(ready)
}

// serve runs the server on lis until ctx ends, then stops gracefully:
// health turns NOT_SERVING, agents get Goodbye (agentapi.Close), in-flight
// calls finish within shutdownGrace, and whatever is left (client watches)
// is cut.
func (a *api) serve(lis net.Listener) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		errc := make(chan error, 1)
		go func() { errc <- a.server.Serve(lis) }()
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		a.health.Shutdown()
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		_ = a.agents.Close(sctx)
		stopped := make(chan struct{})
		go func() { a.server.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-sctx.Done():
			a.server.Stop()
			<-stopped
		}
		<-errc
		return nil
	}
}
