package agentapi

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/membership"
)

// recheckTimeout bounds the store read of one Recheck of one stream.
const recheckTimeout = 10 * time.Second

// Registry is what the service needs of the hub's bootstrap trust:
// hub/membership.Registry implements it.
type Registry interface {
	// Register exchanges a token and a CSR for the cluster's certificate.
	Register(ctx context.Context, req membership.Request) (membership.Result, error)
	// Authorize returns an error wrapping membership.ErrRevoked when cert may no
	// longer speak for cluster.
	Authorize(ctx context.Context, cluster string, cert *x509.Certificate) error
	// Renew signs a CSR for a new key of the stream's cluster (renewal.go).
	Renew(ctx context.Context, req membership.Renewal) (membership.Result, error)
}

// Register serves a bootstrap registration (see RegisterRequest). It is the
// one call made without a client certificate, so it is rate-limited before
// anything else. The Registry checks the token, the topology's labels and
// the key (pending keys are never replaced) and creates the Cluster
// record, cordoned when the hub makes new clusters start cordoned.
func (s *Server) Register(ctx context.Context, req *agentv1.RegisterRequest) (*agentv1.RegisterResponse, error) {
	if s.cfg.Registry == nil {
		return nil, grpcStatus(fmt.Errorf("%w: this hub has no bootstrap tokens; mint agent certificates with `tether-hub mint-agent`", ErrUnimplemented))
	}
	if err := s.registrations.allow(sourceOf(ctx), time.Now()); err != nil {
		s.log.Warn("registration refused", "cluster", req.GetClusterName(), "error", err)
		return nil, grpcStatus(err)
	}
	topo := req.GetTopology()
	res, err := s.cfg.Registry.Register(ctx, membership.Request{
		Token: req.GetToken(), Cluster: req.GetClusterName(), CSRPEM: req.GetCsrPem(),
		Topology: topo,
	})
	if err != nil {
		err = registryError(err)
		s.log.Warn("registration refused", "cluster", req.GetClusterName(), "agent_version", req.GetAgentVersion(), "error", err)
		return nil, grpcStatus(err)
	}
	s.log.Info("agent registered", "cluster", req.GetClusterName(), "agent_version", req.GetAgentVersion(), "key", res.KeyFingerprint)
	return &agentv1.RegisterResponse{
		CertificatePem: res.CertPEM, CaBundlePem: res.CAPEM,
		ClusterName: req.GetClusterName(), NotAfter: timestamppb.New(res.NotAfter),
	}, nil
}

// registryError maps the registry's errors to the service's.
func registryError(err error) error {
	switch {
	case errors.Is(err, membership.ErrMalformed), errors.Is(err, membership.ErrRefused):
		return fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	case errors.Is(err, membership.ErrInvalid):
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	case errors.Is(err, membership.ErrPendingApproval):
		return fmt.Errorf("%w: %v", ErrPendingApproval, err)
	case errors.Is(err, membership.ErrRevoked):
		return fmt.Errorf("%w: %v", ErrRevoked, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

// authorize checks that the stream's certificate was not revoked and has
// not expired: a stream opened on a connection whose handshake is older
// than its certificate's expiry is refused (Unauthenticated, no Goodbye:
// the agent reconnects, with a new handshake, presenting its renewed one).
func (s *Server) authorize(ctx context.Context, st *stream) error {
	if s.cfg.Registry == nil {
		return nil
	}
	cert := st.certificate()
	if cert == nil {
		return fmt.Errorf("%w: no client certificate", ErrUnauthenticated)
	}
	if now := time.Now(); now.After(cert.NotAfter) {
		return fmt.Errorf("%w: the client certificate of cluster %q expired at %s; reconnect with the renewed one",
			ErrUnauthenticated, st.cluster, cert.NotAfter.UTC().Format(time.RFC3339))
	}
	if err := s.cfg.Registry.Authorize(ctx, st.cluster, cert); err != nil {
		return registryError(err)
	}
	return nil
}

// Recheck checks the certificates of cluster's open streams again and ends
// those that were revoked (Goodbye CLUSTER_REMOVED). The hub calls it for
// every change of an agent record (membership.Registry.Watch), which is how
// `tetherctl cluster remove` disconnects an agent at once.
func (s *Server) Recheck(cluster string) {
	if s.cfg.Registry == nil {
		return
	}
	s.mu.Lock()
	var live []*stream
	for st := range s.all {
		if st.cluster == cluster {
			live = append(live, st)
		}
	}
	s.mu.Unlock()
	for _, st := range live {
		ctx, cancel := context.WithTimeout(context.Background(), recheckTimeout)
		err := s.authorize(ctx, st)
		cancel()
		if errors.Is(err, ErrRevoked) {
			st.log.Warn("agent stream ended: certificate revoked", "error", err)
			st.end(err)
		}
	}
}

// peerCert returns the verified client certificate of ctx's peer, or nil.
func peerCert(ctx context.Context) *x509.Certificate {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.PeerCertificates) == 0 {
		return nil
	}
	return info.State.PeerCertificates[0]
}
