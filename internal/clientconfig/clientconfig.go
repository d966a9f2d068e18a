// Package clientconfig is the credentials file of a hub client: the hub's
// address, the CA to trust, and a client certificate and key. The hub writes
// one for its admin on first start (DATA_DIR/admin.conf, like k3s's
// kubeconfig); `tetherctl user create` writes one per user; tetherctl reads
// it from --config, TETHER_CONFIG or ~/.tether/config, in that order.
// Programs read it through the public client package (client.LoadConfig),
// which owns dialing with it.
//
// It imports internal/durable, sigs.k8s.io/yaml and the standard library.
package clientconfig

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/tetherproj/tether/internal/durable"
)

// Identification of the file format.
const (
	APIVersion = "tether.io/v1"
	Kind       = "Config"
	// EnvVar names the file when no --config is given.
	EnvVar = "TETHER_CONFIG"
)

// Config is one client's credentials. PEM data is stored inline so that the
// file is all a user needs to copy.
type Config struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Server is the hub's gRPC address, host:port.
	Server string `json:"server"`
	// User is the identity in the certificate, for display.
	User string `json:"user,omitempty"`
	// CertificateAuthority is the hub CA, PEM.
	CertificateAuthority string `json:"certificateAuthority"`
	// ClientCertificate and ClientKey are PEM.
	ClientCertificate string `json:"clientCertificate"`
	ClientKey         string `json:"clientKey"`
}

// Path resolves which file to read: flag, then $TETHER_CONFIG, then
// ~/.tether/config.
func Path(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if env := os.Getenv(EnvVar); env != "" {
		return env, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no --config, no $%s and no home directory: %w", EnvVar, err)
	}
	return filepath.Join(home, ".tether", "config"), nil
}

// Load reads and checks the file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("config %s does not exist: pass --config FILE or set $%s (the hub writes DATA_DIR/admin.conf on first start)", path, EnvVar)
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return &c, nil
}

// Marshal returns the file's content for c.
func (c *Config) Marshal() ([]byte, error) {
	c.APIVersion, c.Kind = APIVersion, Kind
	return yaml.Marshal(c)
}

// Write stores c at path durably (durable.WriteFile), readable only by its
// owner.
func (c *Config) Write(path string) error {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return durable.WriteFile(path, data, 0o600)
}

// TLS returns the client TLS configuration: trust only the hub CA, present
// the client certificate.
func (c *Config) TLS() (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(c.CertificateAuthority)) {
		return nil, fmt.Errorf("certificateAuthority: no PEM certificate")
	}
	cert, err := tls.X509KeyPair([]byte(c.ClientCertificate), []byte(c.ClientKey))
	if err != nil {
		return nil, fmt.Errorf("clientCertificate/clientKey: %w", err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// CheckExpiry returns an error saying what to do when the client
// certificate is not valid at now: a hub refuses it at the handshake, which
// a client sees only as a broken connection.
func (c *Config) CheckExpiry(now time.Time) error {
	block, _ := pem.Decode([]byte(c.ClientCertificate))
	if block == nil {
		return fmt.Errorf("clientCertificate: no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return fmt.Errorf("clientCertificate: %w", err)
	}
	if now.After(cert.NotAfter) {
		return fmt.Errorf("the client certificate of user %q expired at %s: the hub renews DATA_DIR/admin.conf at start and hourly (copy it again), "+
			"other users need a new config from an admin (tetherctl user create)", c.User, cert.NotAfter.UTC().Format(time.RFC3339))
	}
	if now.Before(cert.NotBefore) {
		return fmt.Errorf("the client certificate of user %q is valid only from %s: is this machine's clock right?", c.User, cert.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}

func (c *Config) validate() error {
	switch {
	case c.APIVersion != APIVersion || c.Kind != Kind:
		return fmt.Errorf("apiVersion/kind = %q/%q; want %q/%q", c.APIVersion, c.Kind, APIVersion, Kind)
	case c.Server == "":
		return fmt.Errorf("server: required (host:port of the hub)")
	case c.CertificateAuthority == "":
		return fmt.Errorf("certificateAuthority: required")
	case c.ClientCertificate == "" || c.ClientKey == "":
		return fmt.Errorf("clientCertificate and clientKey: required")
	}
	_, err := c.TLS()
	return err
}
