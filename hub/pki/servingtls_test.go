package pki

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"
)

// TestServingTLSMeetsClientTLS: a server configured by ServingTLS and a
// client by ClientTLS complete a handshake over TCP, the client's identity
// crossing; a client without a certificate passes only when auth allows.
func TestServingTLSMeetsClientTLS(t *testing.T) {
	ca := newTestCA(t)
	alice := &Identity{Name: "alice", Kind: KindAdmin}
	for _, tc := range []struct {
		name   string
		auth   tls.ClientAuthType
		id     *Identity
		wantOK bool
	}{
		{"certificate given", tls.VerifyClientCertIfGiven, alice, true},
		{"none, none needed", tls.VerifyClientCertIfGiven, nil, true},
		{"none, one required", tls.RequireAndVerifyClientCert, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srvCfg, err := ca.ServingTLS([]string{"127.0.0.1"}, time.Hour, tc.auth)
			if err != nil {
				t.Fatalf("ServingTLS: %v", err)
			}
			cliCfg, err := ca.ClientTLS(tc.id, time.Hour, "127.0.0.1")
			if err != nil {
				t.Fatalf("ClientTLS: %v", err)
			}
			addr, peer, srvErr := serveOnce(t, srvCfg)
			cli, cliErr := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cliCfg)
			if cli != nil {
				defer cli.Close()
			}
			err = <-srvErr
			if ok := err == nil && cliErr == nil; ok != tc.wantOK {
				t.Fatalf("handshake: server %v, client %v; want success %v", err, cliErr, tc.wantOK)
			}
			if !tc.wantOK || tc.id == nil {
				return
			}
			got, err := IdentityOf((<-peer)[0])
			if err != nil || got != *tc.id {
				t.Errorf("identity over TLS = %+v, %v; want %+v", got, err, *tc.id)
			}
		})
	}
}

// serveOnce accepts one TLS connection with cfg on 127.0.0.1 and returns
// its address, then the client's certificates and the handshake's error.
func serveOnce(t *testing.T, cfg *tls.Config) (string, <-chan []*x509.Certificate, <-chan error) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	peer, errs := make(chan []*x509.Certificate, 1), make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			errs <- err
			return
		}
		defer conn.Close()
		tc := conn.(*tls.Conn)
		if err := tc.Handshake(); err != nil {
			errs <- err
			return
		}
		peer <- tc.ConnectionState().PeerCertificates
		errs <- nil
	}()
	return ln.Addr().String(), peer, errs
}
