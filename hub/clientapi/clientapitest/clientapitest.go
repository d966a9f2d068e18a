// Package clientapitest serves the hub's client API for tests as the hub
// does: over real gRPC and TLS on a free 127.0.0.1 port, with a serving
// certificate of the test's CA (pki.CA.ServingTLS), until the test ends.
//
//	api, err := clientapi.New(cfg, st, nil, logger)
//	addr := clientapitest.Serve(t, api, ca, tls.RequireAndVerifyClientCert)
//
// The store and whatever else the API uses stay the test's: register
// their cleanup before calling Serve, so that the server stops first.
package clientapitest

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/pki"
)

// certLifetime is how long the test's serving certificate is valid: longer
// than any test runs.
const certLifetime = time.Hour

// Serve registers api's services on a new gRPC server with opts, serves
// them on 127.0.0.1 with a serving certificate of ca, checking client
// certificates of ca as auth says, and returns the address. The server
// stops, and Serve waits for it, when the test ends.
func Serve(t testing.TB, api *clientapi.Server, ca *pki.CA, auth tls.ClientAuthType, opts ...grpc.ServerOption) string {
	t.Helper()
	cfg, err := ca.ServingTLS([]string{"127.0.0.1"}, certLifetime, auth)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(append(opts, grpc.Creds(credentials.NewTLS(cfg)))...)
	api.Register(gs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- gs.Serve(ln) }()
	t.Cleanup(func() {
		gs.Stop()
		<-served
	})
	return ln.Addr().String()
}
