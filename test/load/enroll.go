package load

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tetherproj/tether/agent/hubclient"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/internal/certs"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// final reports whether a refusal of Register cannot pass by retrying, as
// tether-agent decides.
func final(err error) bool {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.InvalidArgument, codes.PermissionDenied, codes.Unimplemented:
		return true
	}
	return false
}

// Enrollment methods: how a simulated agent gets its certificate.
const (
	// EnrollToken registers with a bootstrap token over the agent
	// protocol's Register (as tether-agent --token does): the hub signs
	// the agent's CSR, at most its registration rate a second
	// (--registration-rate per source address, and 10 a second in all).
	EnrollToken = "token"
	// EnrollMint signs the agent's certificate with the hub CA's key from
	// the hub's data directory (as `tether-hub mint-agent` does); the
	// first heartbeat registers the cluster. This is how 10,000 agents
	// enroll in seconds rather than in the ~17 minutes the hub's total
	// registration rate allows.
	EnrollMint = "mint"
)

// agentCertLifetime is the lifetime of minted agent certificates: far
// beyond any run, so no renewal happens during one.
const agentCertLifetime = 24 * time.Hour

// registerTimeout bounds one Register call, retried until it passes or
// is refused for good.
const registerTimeout = 30 * time.Second

// enroller returns the TLS configuration of a cluster's agent.
type enroller func(ctx context.Context, cluster string) (*tls.Config, error)

// mintEnroller signs certificates with the CA in hubDir.
func mintEnroller(hubDir string) (enroller, error) {
	ca, err := pki.LoadCA(filepath.Join(hubDir, hub.PKIDir, "ca.crt"), filepath.Join(hubDir, hub.PKIDir, "ca.key"))
	if err != nil {
		return nil, fmt.Errorf("load the hub CA: %w", err)
	}
	return func(_ context.Context, cluster string) (*tls.Config, error) {
		issued, err := ca.IssueClient(pki.Identity{Name: cluster, Kind: pki.KindAgent}, agentCertLifetime)
		if err != nil {
			return nil, fmt.Errorf("mint %s: %w", cluster, err)
		}
		cert, err := tls.X509KeyPair(issued.CertPEM, issued.KeyPEM)
		if err != nil {
			return nil, err
		}
		return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}, nil
	}, nil
}

// tokenEnroller registers with token at addrs, trusting the CA in
// caFile (the pinned CA).
func tokenEnroller(addrs []string, token, caFile string) (enroller, error) {
	data, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("hub CA: %w", err)
	}
	ca, err := certs.ParseCertificate(data)
	if err != nil {
		return nil, fmt.Errorf("hub CA %s: %w", caFile, err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	trust := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	conn, err := hubclient.Dial(addrs, trust)
	if err != nil {
		return nil, err
	}
	client := agentv1.NewAgentServiceClient(conn)
	return func(ctx context.Context, cluster string) (*tls.Config, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
		if err != nil {
			return nil, err
		}
		resp, err := register(ctx, client, &agentv1.RegisterRequest{
			Token: token, ClusterName: cluster, AgentVersion: "tether-load",
			CsrPem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr}),
		})
		if err != nil {
			return nil, fmt.Errorf("register %s: %w", cluster, err)
		}
		der, _ := pem.Decode(resp.GetCertificatePem())
		if der == nil {
			return nil, errors.New("register " + cluster + ": no certificate in the answer")
		}
		cert := tls.Certificate{Certificate: [][]byte{der.Bytes}, PrivateKey: key}
		return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
	}, nil
}

// register calls Register until it passes or is refused for good,
// waiting registerPause between attempts (the hub's rate limit, a token
// raced by another replica).
func register(ctx context.Context, client agentv1.AgentServiceClient, req *agentv1.RegisterRequest) (*agentv1.RegisterResponse, error) {
	for {
		callCtx, cancel := context.WithTimeout(ctx, registerTimeout)
		resp, err := client.Register(callCtx, req)
		cancel()
		if err == nil || final(err) {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(registerPause):
		}
	}
}

// registerPause is the wait after a Register that may pass later.
const registerPause = 200 * time.Millisecond
