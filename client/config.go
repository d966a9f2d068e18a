package client

import (
	"crypto/tls"
	"fmt"
	"time"

	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/internal/hubaddr"
)

// ConfigEnvVar names the credentials file tetherctl reads when it is given
// no --config; ConfigPath follows the same order.
const ConfigEnvVar = clientconfig.EnvVar

// Config is what Dial needs: where the hub is, the CA that signed its
// serving certificate, and the client's certificate and key.
type Config struct {
	// Address is the hub's gRPC address, host:port, or the addresses of
	// its replicas separated by commas (tried in a shuffled order, the
	// next one when one fails).
	Address string
	// ServerName is the name the hub's certificate must carry when it is
	// not the host of Address (a tunnel to localhost, say). Empty: the
	// host of each address. Only with a single address.
	ServerName string
	// User names the certificate's identity in error messages; optional.
	User string
	// CAPEM is the hub's CA certificate, PEM.
	CAPEM []byte
	// CertPEM and KeyPEM are the client's certificate and key, PEM.
	CertPEM, KeyPEM []byte
}

// LoadConfig reads a credentials file: admin.conf, or one that
// `tetherctl user create` wrote.
func LoadConfig(path string) (Config, error) {
	f, err := clientconfig.Load(path)
	if err != nil {
		return Config{}, err
	}
	return Config{Address: f.Server, User: f.User, CAPEM: []byte(f.CertificateAuthority),
		CertPEM: []byte(f.ClientCertificate), KeyPEM: []byte(f.ClientKey)}, nil
}

// ConfigPath returns the credentials file tetherctl would read: explicit
// when not empty, else $TETHER_CONFIG, else ~/.tether/config.
func ConfigPath(explicit string) (string, error) {
	return clientconfig.Path(explicit)
}

// addrs returns the checked list of the hub's addresses.
func (c Config) addrs() ([]string, error) {
	addrs := hubaddr.Split(c.Address)
	if err := hubaddr.Validate("address", addrs); err != nil {
		return nil, err
	}
	if c.ServerName != "" && len(addrs) > 1 {
		return nil, fmt.Errorf("server name %q: only with a single address, not %d (each replica's certificate is checked for its own host)", c.ServerName, len(addrs))
	}
	return addrs, nil
}

// tls returns the connection's TLS configuration, after checking that the
// client certificate is valid now: a hub refuses an expired one at the
// handshake, which a client would see only as a broken connection.
func (c Config) tls(now time.Time) (*tls.Config, error) {
	f := &clientconfig.Config{Server: c.Address, User: c.User, CertificateAuthority: string(c.CAPEM),
		ClientCertificate: string(c.CertPEM), ClientKey: string(c.KeyPEM)}
	cfg, err := f.TLS()
	if err != nil {
		return nil, err
	}
	if err := f.CheckExpiry(now); err != nil {
		return nil, err
	}
	cfg.MinVersion = tls.VersionTLS13
	cfg.ServerName = c.ServerName
	return cfg, nil
}
