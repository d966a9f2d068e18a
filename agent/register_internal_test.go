package agent

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"

	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	"github.com/tetherproj/tether/internal/certs"
)

// TestFetchPinnedCAFromReplicas pins the CA from the replica that answers
// when the other addresses are dead, each replica verified for its own
// host; with every address dead the error is one to retry.
func TestFetchPinnedCAFromReplicas(t *testing.T) {
	hc := hubtest.NewCerts(t)
	caPEM, err := os.ReadFile(hc.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certs.ParseCertificate(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	serving := hc.ServingFor(t, "127.0.0.2")
	serving.Certificate = append(serving.Certificate, ca.Raw) // the chain names the CA, as the hub's does
	hub := hubtest.StartServing(t, hc, "127.0.0.2:0", serving)
	dead := []string{deadAddr(t), deadAddr(t)}
	ctx := context.Background()

	got, err := fetchPinnedCA(ctx, []string{dead[0], hub.Addr, dead[1]}, certs.Hash(ca))
	if err != nil || !got.Equal(ca) {
		t.Errorf("fetchPinnedCA(dead, replica, dead) = %v, %v; want the hub CA", got, err)
	}
	if _, err := fetchPinnedCA(ctx, dead, certs.Hash(ca)); err == nil || errors.Is(err, ErrRegistrationRefused) {
		t.Errorf("fetchPinnedCA(dead, dead) = %v; want an error to retry", err)
	}
	other := "sha256:" + "00000000000000000000000000000000000000000000000000000000000000ff"
	if _, err := fetchPinnedCA(ctx, []string{dead[0], hub.Addr}, other); !errors.Is(err, ErrRegistrationRefused) {
		t.Errorf("fetchPinnedCA with another pin = %v; want ErrRegistrationRefused", err)
	}
}

// deadAddr is an address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
