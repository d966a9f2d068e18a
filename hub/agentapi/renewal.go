package agentapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/membership"
)

// renewalMinInterval is the shortest time between two renewals served on
// one stream: each signs a certificate and writes the agent record, so an
// agent must not make the hub do it in a loop. Agents retry a refusal after
// seconds (agent/hubclient renewal.go), so this never slows an honest one.
const renewalMinInterval = 2 * time.Second

// renew answers a CertificateRenewal: a certificate for the CSR's key with
// the identity of the stream's certificate (the cluster name is never taken
// from the message), or the reason it was refused. The stream stays open;
// from now on the new certificate is the stream's (Recheck checks it). A
// certificate the registry no longer accepts ends the stream, as Recheck
// would.
func (s *Server) renew(ctx context.Context, st *stream, req *agentv1.CertificateRenewal) error {
	res, err := s.renewal(ctx, st, req)
	if errors.Is(err, ErrRevoked) {
		return err
	}
	if err != nil {
		st.log.Warn("certificate renewal refused", "error", err)
		st.reply(renewed(&agentv1.CertificateRenewed{ErrorMessage: err.Error()}))
		return nil
	}
	st.setCertificate(res.Cert)
	st.log.Info("agent certificate renewed over the stream", "key", res.KeyFingerprint, "serial", res.Cert.SerialNumber.String(), "not_after", res.NotAfter)
	st.reply(renewed(&agentv1.CertificateRenewed{
		CertificatePem: res.CertPEM, CaBundlePem: res.CAPEM, NotAfter: timestamppb.New(res.NotAfter),
	}))
	return nil
}

// renewal checks the renewal's pace and has the registry sign it.
func (s *Server) renewal(ctx context.Context, st *stream, req *agentv1.CertificateRenewal) (membership.Result, error) {
	if s.cfg.Registry == nil {
		return membership.Result{}, fmt.Errorf("%w: this hub has no registry to renew certificates with; mint a new one with `tether-hub mint-agent`", ErrUnimplemented)
	}
	now := time.Now()
	st.mu.Lock()
	last := st.renewed
	if now.Sub(last) >= renewalMinInterval {
		st.renewed = now
	}
	cert := st.cert
	st.mu.Unlock()
	if wait := renewalMinInterval - now.Sub(last); wait > 0 {
		return membership.Result{}, fmt.Errorf("%w: certificate renewals: at most one per %s per stream; retry in %s",
			ErrLimit, renewalMinInterval, wait.Round(time.Millisecond))
	}
	if err := s.authorize(ctx, st); err != nil {
		return membership.Result{}, err
	}
	res, err := s.cfg.Registry.Renew(ctx, membership.Renewal{Cluster: st.cluster, Cert: cert, CSRPEM: req.GetCsrPem()})
	if err != nil {
		return membership.Result{}, registryError(err)
	}
	return res, nil
}

func renewed(m *agentv1.CertificateRenewed) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_CertificateRenewed{CertificateRenewed: m}}
}
