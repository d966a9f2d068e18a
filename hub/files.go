package hub

import (
	"crypto/tls"
	"net"
	"os"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/serving"
)

// serverTLS is the TLS configuration of the one gRPC port: the serving
// certificate of cert, current at each handshake; clients may come without
// a certificate (agents calling Register), every service checks the
// verified certificate it needs.
func serverTLS(ca *pki.CA, cert *serving.Cert) *tls.Config {
	return &tls.Config{
		GetCertificate: cert.GetCertificate,
		ClientCAs:      ca.Pool(),
		ClientAuth:     tls.VerifyClientCertIfGiven,
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"h2"},
	}
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
