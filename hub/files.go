package hub

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/internal/clientconfig"
)

// AdminUser is the identity of the admin certificate in admin.conf.
const AdminUser = "admin"

// serverTLS issues the serving certificate for the hub's names and returns
// the TLS configuration of the one gRPC port: clients may come without a
// certificate (agents calling Register), every service checks the verified
// certificate it needs.
func serverTLS(ca *pki.CA, listenAddr string, extraSANs []string) (*tls.Config, error) {
	issued, err := ca.IssueServing(append(servingHosts(listenAddr), extraSANs...), pki.ServingLifetime)
	if err != nil {
		return nil, fmt.Errorf("issue serving certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(issued.CertPEM, issued.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	// The CA goes in the chain: a registering agent pins it by hash before
	// it trusts anything (DESIGN §8).
	cert.Certificate = append(cert.Certificate, ca.Cert.Raw)
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    ca.Pool(),
		ClientAuth:   tls.VerifyClientCertIfGiven,
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"h2"},
	}, nil
}

// servingHosts are the names the serving certificate is valid for: the
// loopback names, the host name, the listen host, and every interface
// address when listening on all of them (agents dial whichever they reach).
func servingHosts(listenAddr string) []string {
	hosts := []string{"127.0.0.1", "::1", "localhost"}
	if name, err := os.Hostname(); err == nil && name != "" {
		hosts = append(hosts, name)
	}
	host, _, _ := net.SplitHostPort(listenAddr)
	ip := net.ParseIP(host)
	switch {
	case host == "" || (ip != nil && ip.IsUnspecified()):
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				hosts = append(hosts, n.IP.String())
			}
		}
	default:
		hosts = append(hosts, host)
	}
	return hosts
}

// dialAddr is the address a local client dials for the hub listening on
// addr: the loopback address when it listens on every interface.
func dialAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// writeAdminConf writes admin.conf with a new admin certificate unless the
// file exists: an existing one is never replaced, since users copy it and
// may have edited its server. When it names another address than the one
// the hub listens on (a --listen port 0 restart), a warning points at
// hub.addr.
func writeAdminConf(path string, ca *pki.CA, server string, logger hclog.Logger) error {
	if old, err := clientconfig.Load(path); err == nil {
		if old.Server != server {
			logger.Warn("admin.conf names another address; it is never rewritten, the actual one is in hub.addr",
				"path", path, "admin_conf_server", old.Server, "listen", server)
		}
		return nil
	} else if _, statErr := os.Stat(path); statErr == nil {
		return fmt.Errorf("admin.conf %s exists but is unusable (remove it to get a new one): %w", path, err)
	}
	issued, err := ca.IssueClient(pki.Identity{Name: AdminUser, Kind: pki.KindAdmin}, pki.ServingLifetime)
	if err != nil {
		return fmt.Errorf("issue admin certificate: %w", err)
	}
	c := &clientconfig.Config{
		Server: server, User: AdminUser, CertificateAuthority: string(ca.CertPEM),
		ClientCertificate: string(issued.CertPEM), ClientKey: string(issued.KeyPEM),
	}
	tmp := path + ".tmp"
	if err := c.Write(tmp); err != nil {
		return fmt.Errorf("write admin.conf: %w", err)
	}
	defer os.Remove(tmp)
	// A hard link creates the file whole and fails if another process made
	// one meanwhile: readers never see half a file, nothing is overwritten.
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("write admin.conf: %w", err)
	}
	logger.Info("admin credentials written", "path", path, "user", AdminUser)
	return nil
}

// writeAtomic replaces path with data, so that a reader sees the old or the
// new content, never a part.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
