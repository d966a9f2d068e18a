package agentapi_test

import (
	"context"
	"crypto/x509"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/internal/certs"
)

// registry is a fake of the hub's registry: it signs renewals with ca and
// accepts the keys it was told to.
type registry struct {
	ca *pki.CA

	mu       sync.Mutex      // guards the fields below
	accepted map[string]bool // key fingerprints; absent: accepted
	renewals []membership.Renewal
}

func (r *registry) Register(context.Context, membership.Request) (membership.Result, error) {
	return membership.Result{}, errors.New("not in this test")
}

func (r *registry) Authorize(_ context.Context, cluster string, cert *x509.Certificate) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ok, known := r.accepted[membership.Fingerprint(cert.RawSubjectPublicKeyInfo)]; known && !ok {
		return membership.ErrRevoked
	}
	return nil
}

func (r *registry) Renew(_ context.Context, req membership.Renewal) (membership.Result, error) {
	r.mu.Lock()
	r.renewals = append(r.renewals, req)
	r.mu.Unlock()
	issued, err := r.ca.SignCSR(req.CSRPEM, pki.Identity{Name: req.Cluster, Kind: pki.KindAgent}, time.Hour)
	if err != nil {
		return membership.Result{}, membership.ErrInvalid
	}
	return membership.Result{CertPEM: issued.CertPEM, CAPEM: r.ca.CertPEM, Cert: issued.Cert, NotAfter: issued.Cert.NotAfter,
		KeyFingerprint: membership.Fingerprint(issued.Cert.RawSubjectPublicKeyInfo)}, nil
}

func (r *registry) set(fp string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.accepted[fp] = ok
}

func renewal(t *testing.T) *agentv1.AgentMessage {
	t.Helper()
	csr, _, err := certs.NewCSR("edge-2") // a forged subject: ignored
	if err != nil {
		t.Fatal(err)
	}
	return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_CertificateRenewal{CertificateRenewal: &agentv1.CertificateRenewal{CsrPem: csr}}}
}

// TestRenewalKeepsTheStream: a renewal is signed for the stream's cluster
// (not the CSR's subject), answered on the stream, which goes on; from then
// on the new certificate is the stream's: revoking the old key does not end
// it, revoking the new one does. Renewals are paced per stream.
func TestRenewalKeepsTheStream(t *testing.T) {
	reg := &registry{accepted: map[string]bool{}}
	h := startHub(t, agentapi.Config{Registry: reg})
	reg.ca = h.ca
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	a.expect("welcome "+hubIdentity, "syncdone 0")

	a.send(renewal(t))
	m := a.recv().GetCertificateRenewed()
	cert, err := certs.ParseCertificate(m.GetCertificatePem())
	if err != nil || m.GetErrorMessage() != "" {
		t.Fatalf("CertificateRenewed = %v (%v); want a certificate", m, err)
	}
	if id, err := pki.IdentityOf(cert); err != nil || id.Name != "edge-1" || !m.GetNotAfter().AsTime().Equal(cert.NotAfter) {
		t.Errorf("renewed certificate of %+v (%v), not after %s; want agent edge-1", id, err, m.GetNotAfter().AsTime())
	}
	if len(reg.renewals) != 1 || reg.renewals[0].Cluster != "edge-1" || reg.renewals[0].Cert == nil {
		t.Errorf("registry asked %+v; want one renewal of edge-1 with the stream's certificate", reg.renewals)
	}

	a.send(renewal(t))
	if got := a.recv().GetCertificateRenewed().GetErrorMessage(); !strings.Contains(got, "at most one per 2s per stream") {
		t.Errorf("a second renewal at once = %q; want refused by the pace limit", got)
	}

	reg.set(membership.Fingerprint(reg.renewals[0].Cert.RawSubjectPublicKeyInfo), false) // the old key's grace ends
	h.srv.Recheck("edge-1")
	h.works.Set(edge1, work("after", "1"))
	a.expect("upsert after@1")

	reg.set(membership.Fingerprint(cert.RawSubjectPublicKeyInfo), false) // the renewed key revoked
	h.srv.Recheck("edge-1")
	a.expect("goodbye DISCONNECT_REASON_CLUSTER_REMOVED")
}
