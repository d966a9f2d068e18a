package pki

import (
	"crypto/tls"
	"fmt"
	"time"
)

// ServingTLS is the TLS configuration of a server for hosts: a new serving
// certificate of ca valid for lifetime, and client certificates of ca
// checked as auth says (tls.VerifyClientCertIfGiven lets an agent reach
// Register without one). The hub's tests serve with it; the hub itself
// rotates its serving certificate (hub/serving).
func (ca *CA) ServingTLS(hosts []string, lifetime time.Duration, auth tls.ClientAuthType) (*tls.Config, error) {
	issued, err := ca.IssueServing(hosts, lifetime)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(issued.CertPEM, issued.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("load the serving certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: ca.Pool(), ClientAuth: auth, MinVersion: tls.VersionTLS13}, nil
}
