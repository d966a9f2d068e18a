// Package servingtest looks at a server's serving certificate from the
// client's side, for tests of certificate rotation: the leaf a new TLS
// handshake gets, and the leaf of the connection a gRPC call went over.
package servingtest

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// Handshake opens a new TLS connection to addr, verified against pool for
// the address's host, and returns the leaf it got; it fails the test
// unless the CA follows the leaf in the chain.
func Handshake(t testing.TB, pool *x509.CertPool, addr string) *x509.Certificate {
	t.Helper()
	host, _, _ := net.SplitHostPort(addr)
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: host, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	defer conn.Close()
	chain := conn.ConnectionState().PeerCertificates
	if len(chain) != 2 || !chain[1].IsCA {
		t.Fatalf("the server sent a chain of %d certificates; want the leaf and the CA", len(chain))
	}
	return chain[0]
}

// PeerLeaf returns the serving certificate of the connection that call,
// made with grpc.Peer(p), went over.
func PeerLeaf(t testing.TB, call string, p *peer.Peer) *x509.Certificate {
	t.Helper()
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.PeerCertificates) == 0 {
		t.Fatalf("%s went over %T; want TLS with a certificate", call, p.AuthInfo)
	}
	return info.State.PeerCertificates[0]
}
