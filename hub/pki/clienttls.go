package pki

import (
	"crypto/tls"
	"fmt"
	"time"
)

// ClientTLS is the TLS configuration of a client of the hub at
// serverName: it trusts only ca and, unless id is nil, presents a new
// certificate for id valid for lifetime. The hub's tests dial with it.
func (ca *CA) ClientTLS(id *Identity, lifetime time.Duration, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{RootCAs: ca.Pool(), ServerName: serverName, MinVersion: tls.VersionTLS13}
	if id == nil {
		return cfg, nil
	}
	issued, err := ca.IssueClient(*id, lifetime)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(issued.CertPEM, issued.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("load the certificate issued to %s: %w", id.Name, err)
	}
	cfg.Certificates = []tls.Certificate{cert}
	return cfg, nil
}
