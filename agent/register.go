package agent

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tetherproj/tether/agent/hubclient"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/backoff"
	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/internal/durable"
)

// Files registration keeps in the data directory.
const (
	// CertFileName, KeyFileName and CAFileName are the agent's credentials
	// after registration: its certificate, its key (mode 0600, written
	// before registering so that a registration awaiting approval keeps its
	// key across restarts) and the hub CA it pinned.
	CertFileName = "tls.crt"
	KeyFileName  = "tls.key"
	CAFileName   = "ca.crt"
)

// Registration timing.
const (
	// registerTimeout bounds one attempt: the TLS probes and Register.
	registerTimeout = 30 * time.Second
	// probeTimeout bounds the TLS probe of one hub address, so that a
	// replica that accepts connections and never answers leaves time in
	// the attempt for the next address.
	probeTimeout = 10 * time.Second
)

// registerRetry is the backoff of attempts that may succeed later (hub
// unreachable, rate-limited, awaiting an admin's approval): 1 s up to
// 30 s, with equal jitter.
var registerRetry = backoff.Policy{Base: time.Second, Max: 30 * time.Second, Jitter: true}

// ErrRegistrationRefused is a registration that cannot succeed by retrying:
// a bad token, a hub whose CA does not match --ca-hash, an invalid name. The
// agent exits with it.
var ErrRegistrationRefused = errors.New("agent: registration refused")

// registering reports whether c registers with a bootstrap token.
func (c Config) registering() bool {
	return c.Token != "" || c.CAHash != "" || c.ClusterName != ""
}

// withCredentialsIn points the certificate, key and CA files at the data
// directory, where registration writes them.
func (c Config) withCredentialsIn() Config {
	c.CertFile = filepath.Join(c.DataDir, CertFileName)
	c.KeyFile = filepath.Join(c.DataDir, KeyFileName)
	c.CAFile = filepath.Join(c.DataDir, CAFileName)
	return c
}

// register makes sure the data directory holds a certificate for the
// cluster: one from an earlier registration, or a new one from Register.
// It retries what may pass later and returns ErrRegistrationRefused for
// what cannot.
func (c Config) register(ctx context.Context, log hclog.Logger) error {
	log = log.Named("register").With("cluster", c.ClusterName, "hub", strings.Join(c.HubAddrs, ","))
	if err := finishRenewal(c.CertFile, c.KeyFile); err != nil {
		return fmt.Errorf("--data-dir: finish the certificate renewal a stop interrupted: %w", err)
	}
	if c.registered() {
		log.Debug("using the certificate of an earlier registration", "cert", c.CertFile)
		return nil
	}
	key, err := c.loadOrCreateKey()
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := c.registerOnce(ctx, key, log)
		if err == nil || errors.Is(err, ErrRegistrationRefused) || ctx.Err() != nil {
			return err
		}
		wait := c.registerBackoff(attempt)
		log.Warn("registration not done, retrying", "error", err, "retry_in", wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// registered reports whether the data directory holds a usable
// certificate of the cluster for its key.
func (c Config) registered() bool {
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil || len(pair.Certificate) == 0 {
		return false
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || cert.Subject.CommonName != c.ClusterName || time.Now().After(cert.NotAfter) {
		return false
	}
	_, err = os.Stat(c.CAFile)
	return err == nil
}

func (c Config) registerBackoff(attempt int) time.Duration {
	if c.Backoff != nil {
		return c.Backoff(attempt)
	}
	return registerRetry.Delay(attempt)
}

// registerOnce pins the hub's CA, sends the CSR and stores the result.
// Any of the hub's addresses serves both: they share one CA.
func (c Config) registerOnce(ctx context.Context, key crypto.Signer, log hclog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	ca, err := fetchPinnedCA(ctx, c.HubAddrs, c.CAHash)
	if err != nil {
		return err
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return fmt.Errorf("certificate request: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	conn, err := hubclient.Dial(c.HubAddrs, &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool})
	if err != nil {
		return fmt.Errorf("%w: --hub: %v", ErrRegistrationRefused, err)
	}
	defer conn.Close()
	resp, err := agentv1.NewAgentServiceClient(conn).Register(ctx, &agentv1.RegisterRequest{
		Token: c.Token, ClusterName: c.ClusterName, AgentVersion: c.AgentVersion, Topology: c.Topology,
		CsrPem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr}),
	})
	if err != nil {
		return registerError(err)
	}
	if err := c.store(resp, key, ca); err != nil {
		return err
	}
	log.Info("registered with the hub", "not_after", resp.GetNotAfter().AsTime(), "cert", c.CertFile)
	return nil
}

// registerError says whether a refusal of Register is final.
func registerError(err error) error {
	msg := status.Convert(err).Message()
	switch status.Code(err) {
	case codes.Unauthenticated, codes.InvalidArgument, codes.PermissionDenied, codes.Unimplemented:
		return fmt.Errorf("%w: %s", ErrRegistrationRefused, msg)
	case codes.FailedPrecondition:
		return fmt.Errorf("waiting for an admin to approve this agent's key: %s", msg)
	}
	return fmt.Errorf("register: %w", err)
}

// fetchPinnedCA returns the hub CA whose hash is pin, from the first of
// addrs, tried in a random order, that answers within probeTimeout
// (fetchPinnedCAAt). A hub
// that answers with another CA refuses the registration at once: every
// address of the hub must serve the pinned CA.
func fetchPinnedCA(ctx context.Context, addrs []string, pin string) (*x509.Certificate, error) {
	var unreachable []error
	for _, i := range mrand.Perm(len(addrs)) {
		ca, err := fetchPinnedCAAt(ctx, addrs[i], pin)
		if err == nil || errors.Is(err, ErrRegistrationRefused) || ctx.Err() != nil {
			return ca, err
		}
		unreachable = append(unreachable, err)
	}
	return nil, errors.Join(unreachable...)
}

// fetchPinnedCAAt connects to the hub at addr over TLS without trusting
// it, finds the CA in the certificate chain it serves whose hash is pin,
// and checks the serving certificate against that CA and addr's host.
// Nothing is sent before the check: the handshake itself fails on a
// mismatch.
func fetchPinnedCAAt(ctx context.Context, addr, pin string) (*x509.Certificate, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	host, _, _ := net.SplitHostPort(addr)
	var ca *x509.Certificate
	var mismatch error
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Verified by VerifyConnection, against the pinned CA instead of
		// the system roots; a mismatch aborts the handshake.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			ca, mismatch = verifyPinned(cs.PeerCertificates, host, pin)
			return mismatch
		},
	}
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if mismatch != nil {
		return nil, mismatch
	}
	if err != nil {
		return nil, fmt.Errorf("reach the hub at %s: %w", addr, err)
	}
	conn.Close()
	return ca, nil
}

// verifyPinned returns the CA of chain whose hash is pin, once the leaf
// verifies against it for host; an error wrapping ErrRegistrationRefused
// otherwise.
func verifyPinned(chain []*x509.Certificate, host, pin string) (*x509.Certificate, error) {
	if len(chain) == 0 {
		return nil, fmt.Errorf("%w: the hub at %s presented no certificate", ErrRegistrationRefused, host)
	}
	var seen []string
	for _, c := range chain[1:] {
		h := certs.Hash(c)
		seen = append(seen, h)
		if h != pin || !c.IsCA {
			continue
		}
		pool := x509.NewCertPool()
		pool.AddCert(c)
		if _, err := chain[0].Verify(x509.VerifyOptions{Roots: pool, DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			return nil, fmt.Errorf("%w: the hub's serving certificate does not verify against the pinned CA: %v", ErrRegistrationRefused, err)
		}
		return c, nil
	}
	if len(seen) == 0 {
		seen = []string{"none: the hub serves no CA certificate in its chain"}
	}
	return nil, fmt.Errorf("%w: the hub's CA does not match --ca-hash %s (the hub's chain has %s); refusing to send the token to this hub",
		ErrRegistrationRefused, pin, strings.Join(seen, ", "))
}

// loadOrCreateKey returns the key of a registration in progress, or a new
// one written to the key file first.
func (c Config) loadOrCreateKey() (crypto.Signer, error) {
	if data, err := os.ReadFile(c.KeyFile); err == nil {
		key, err := certs.ParsePrivateKey(data)
		if err != nil {
			return nil, fmt.Errorf("--data-dir: %s: %w (remove it to register with a new key)", c.KeyFile, err)
		}
		return key, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	data, err := certs.EncodePrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	if err := durable.WriteFile(c.KeyFile, data, 0o600); err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	return key, nil
}

// store writes the hub CA and the certificate, after checking that the
// certificate is for the agent's key.
func (c Config) store(resp *agentv1.RegisterResponse, key crypto.Signer, pinned *x509.Certificate) error {
	cert, err := certs.ParseCertificate(resp.GetCertificatePem())
	if err != nil {
		return fmt.Errorf("the hub's certificate: %w", err)
	}
	pub, ok := cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(key.Public()) {
		return fmt.Errorf("%w: the hub signed a certificate for another key", ErrRegistrationRefused)
	}
	caPEM := certs.EncodeCertificate(pinned.Raw)
	if err := durable.WriteFile(c.CAFile, caPEM, 0o644); err != nil {
		return fmt.Errorf("--data-dir: %w", err)
	}
	if err := durable.WriteFile(c.CertFile, resp.GetCertificatePem(), 0o644); err != nil {
		return fmt.Errorf("--data-dir: %w", err)
	}
	return nil
}
