package agent

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
)

// tlsConfig returns the client TLS configuration: the hub CA from CAFile,
// and the client certificate read from CertFile and KeyFile now (to fail
// early with the flag's name) and again on every handshake.
func (c Config) tlsConfig() (*tls.Config, error) {
	caPEM, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("--ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("--ca %s: no PEM certificate in the file", c.CAFile)
	}
	if _, err := c.clientCert(); err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(c.HubAddr)
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		RootCAs:    pool,
		ServerName: host,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return c.clientCert()
		},
	}, nil
}

func (c Config) clientCert() (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("--cert %s, --key %s: %w", c.CertFile, c.KeyFile, err)
	}
	return &cert, nil
}
