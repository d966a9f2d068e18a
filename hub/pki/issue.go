package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"github.com/tetherproj/tether/internal/certs"
	"net"
	"time"
)

// Kind says who an identity is.
type Kind string

// Identity kinds, with their roles for users.
const (
	KindAgent  Kind = "agent"
	KindAdmin  Kind = "admin"
	KindViewer Kind = "viewer"
	// KindUser is a user whose role the hub stores (hub/roles), not the
	// certificate.
	KindUser Kind = "user"
)

const orgPrefix = "tether:"

// IsUser reports whether k is a user's (admin, viewer or user), not an
// agent's.
func (k Kind) IsUser() bool { return k == KindAdmin || k == KindViewer || k == KindUser }

// Identity is who a client certificate speaks for.
type Identity struct {
	// Name is the cluster name for an agent, the user name otherwise.
	Name string
	Kind Kind
}

// Issued is a signed certificate with its key, both PEM.
type Issued struct {
	CertPEM, KeyPEM []byte
	Cert            *x509.Certificate
}

// IssueServing issues the hub's serving certificate for hosts (DNS names
// or IP addresses).
func (ca *CA) IssueServing(hosts []string, lifetime time.Duration) (Issued, error) {
	tmpl := ca.template(pkix.Name{CommonName: "tether-hub"}, lifetime)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.issueNewKey(tmpl)
}

// IssueClient issues a client certificate with a new key for id.
func (ca *CA) IssueClient(id Identity, lifetime time.Duration) (Issued, error) {
	tmpl, err := ca.clientTemplate(id, lifetime)
	if err != nil {
		return Issued{}, err
	}
	return ca.issueNewKey(tmpl)
}

// SignCSR signs the public key of a PEM certificate request as id. The
// request's own subject is ignored: the identity is what the hub decided, not
// what the requester asked for.
func (ca *CA) SignCSR(csrPEM []byte, id Identity, lifetime time.Duration) (Issued, error) {
	csr, err := certs.ParseCSR(csrPEM)
	if err != nil {
		return Issued{}, err
	}
	tmpl, err := ca.clientTemplate(id, lifetime)
	if err != nil {
		return Issued{}, err
	}
	cert, certPEM, err := ca.sign(tmpl, csr.PublicKey)
	return Issued{CertPEM: certPEM, Cert: cert}, err
}

func (ca *CA) clientTemplate(id Identity, lifetime time.Duration) (*x509.Certificate, error) {
	if id.Name == "" {
		return nil, fmt.Errorf("pki: identity without a name")
	}
	switch id.Kind {
	case KindAgent, KindAdmin, KindViewer, KindUser:
	default:
		return nil, fmt.Errorf("pki: identity %q: unknown kind %q", id.Name, id.Kind)
	}
	tmpl := ca.template(pkix.Name{CommonName: id.Name, Organization: []string{orgPrefix + string(id.Kind)}}, lifetime)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return tmpl, nil
}

// IdentityOf reads the identity of a certificate the TLS layer has already
// verified against this CA.
func IdentityOf(cert *x509.Certificate) (Identity, error) {
	if len(cert.Subject.Organization) != 1 {
		return Identity{}, fmt.Errorf("pki: certificate %q: want exactly one organization, got %d", cert.Subject.CommonName, len(cert.Subject.Organization))
	}
	id := Identity{Name: cert.Subject.CommonName, Kind: Kind(cert.Subject.Organization[0][min(len(orgPrefix), len(cert.Subject.Organization[0])):])}
	if cert.Subject.Organization[0] != orgPrefix+string(id.Kind) || id.Name == "" {
		return Identity{}, fmt.Errorf("pki: certificate %q (organization %q) is not a Tether identity", cert.Subject.CommonName, cert.Subject.Organization[0])
	}
	switch id.Kind {
	case KindAgent, KindAdmin, KindViewer, KindUser:
		return id, nil
	}
	return Identity{}, fmt.Errorf("pki: certificate %q: unknown kind %q", id.Name, id.Kind)
}

func (ca *CA) template(subject pkix.Name, lifetime time.Duration) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      subject,
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

func (ca *CA) issueNewKey(tmpl *x509.Certificate) (Issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Issued{}, err
	}
	cert, certPEM, err := ca.sign(tmpl, key.Public())
	if err != nil {
		return Issued{}, err
	}
	keyPEM, err := certs.EncodePrivateKey(key)
	return Issued{CertPEM: certPEM, KeyPEM: keyPEM, Cert: cert}, err
}

func (ca *CA) sign(tmpl *x509.Certificate, pub crypto.PublicKey) (*x509.Certificate, []byte, error) {
	if tmpl.NotAfter.After(ca.Cert.NotAfter) {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: sign %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, certs.EncodeCertificate(der), err
}

// IssuedAt is when this CA issued cert: its NotBefore without the clock
// skew allowance every certificate is back-dated by, to whole seconds (a
// certificate's times carry no fractions).
func IssuedAt(cert *x509.Certificate) time.Time { return cert.NotBefore.Add(clockSkew) }
