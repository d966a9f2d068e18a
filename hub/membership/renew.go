package membership

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/internal/certs"
)

// Renewal is one certificate renewal asked for over an agent's stream.
type Renewal struct {
	// Cluster is the stream's cluster, from its certificate: the identity
	// of the new certificate, never taken from the request.
	Cluster string
	// Cert is the certificate the stream's agent holds now (the one it
	// connected with, or the one its last renewal on the stream gave).
	Cert *x509.Certificate
	// CSRPEM is the request for the new key; its subject is ignored.
	CSRPEM []byte
}

// Renew signs req's CSR as the cluster's agent and binds the cluster to the
// new key, keeping the key of req.Cert accepted until req.Cert expires (so
// that the stream that asked, and the agent's certificate until it reloads,
// stay valid). It refuses (ErrRevoked) a certificate Authorize refuses, and
// (ErrInvalid) a CSR that does not parse or reuses a key.
func (r *Registry) Renew(ctx context.Context, req Renewal) (Result, error) {
	if req.Cert == nil {
		return Result{}, fmt.Errorf("%w: renewal of cluster %q without the current certificate", ErrInvalid, req.Cluster)
	}
	csr, err := certs.ParseCSR(req.CSRPEM)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	fp := Fingerprint(csr.RawSubjectPublicKeyInfo)
	var issued *pki.Issued // signed once, stored under whichever revision wins
	for range casAttempts {
		rec, rev, err := r.agent(ctx, req.Cluster)
		if err != nil {
			return Result{}, err
		}
		now := r.cfg.Now()
		if _, err := renew(rec, req.Cluster, req.Cert, fp, time.Time{}, now); err != nil {
			return Result{}, err // checked before anything is signed
		}
		if issued == nil {
			got, err := r.ca.SignCSR(req.CSRPEM, pki.Identity{Name: req.Cluster, Kind: pki.KindAgent}, r.cfg.AgentCertLifetime)
			if err != nil {
				return Result{}, fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			issued = &got
		}
		next, _ := renew(rec, req.Cluster, req.Cert, fp, issued.Cert.NotAfter, now)
		err = r.putAgent(ctx, next, rev)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return Result{}, err
		}
		r.log.Info("agent certificate renewed", "cluster", req.Cluster, "key", fp,
			"previous_key", next.PreviousKeyFingerprint, "previous_not_after", next.PreviousNotAfter, "not_after", next.NotAfter)
		return Result{CertPEM: issued.CertPEM, CAPEM: r.ca.CertPEM, Cert: issued.Cert, NotAfter: next.NotAfter, KeyFingerprint: fp}, nil
	}
	return Result{}, fmt.Errorf("%w: the registration of cluster %q is changing concurrently; retry", ErrConflict, req.Cluster)
}
