package store

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
)

// TLS is how the hub authenticates to an external etcd cluster and checks
// it: etcd's --trusted-ca-file and --client-cert-auth on the other side.
type TLS struct {
	// CAFile holds the PEM certificates that sign etcd's serving
	// certificates; empty means the system's roots.
	CAFile string
	// CertFile and KeyFile are the hub's PEM client certificate and key,
	// both or neither.
	CertFile, KeyFile string
}

// enabled tells whether any TLS file was given.
func (t TLS) enabled() bool { return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" }

// config reads the files into a client TLS configuration; nil when no file
// was given.
func (t TLS) config() (*tls.Config, error) {
	if !t.enabled() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("store: etcd client certificate: give both the certificate and the key file, or neither")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("store: etcd client certificate %s, key %s: %w", t.CertFile, t.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("store: etcd CA: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("store: etcd CA %s: no PEM certificate in it", t.CAFile)
		}
	}
	return cfg, nil
}

// checkSchemes refuses endpoints the etcd client would dial without TLS
// although TLS files were given: the client drops the TLS configuration for
// http:// endpoints, silently.
func (t TLS) checkSchemes(endpoints []string) error {
	if !t.enabled() {
		return nil
	}
	for _, ep := range endpoints {
		if u, err := url.Parse(ep); err == nil && u.Scheme == "http" {
			return fmt.Errorf("store: etcd endpoint %s is plaintext but TLS files were given: use https://", ep)
		}
	}
	return nil
}
