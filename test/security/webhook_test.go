package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// webhookSecret is what a hostile webhook puts in its error body; the hub
// must never repeat it.
const webhookSecret = "SECRET-instance-credentials-AKIA"

// hookServer is a real HTTPS webhook on a chosen loopback address that
// counts the connections it accepts and the requests it receives.
type hookServer struct {
	*httptest.Server
	conns, hits atomic.Int64
}

func startHookServer(t *testing.T, ip string, cert tls.Certificate, h http.HandlerFunc) *hookServer {
	t.Helper()
	lis, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	s := &hookServer{}
	s.Server = &httptest.Server{Listener: lis, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	})}}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// TestWebhookCallsContained: a real hub started with
// --webhook-allow-cidrs 127.0.0.2/32 meets three hostile interpreter
// webhooks. One on 127.0.0.1 (loopback, denied) is never connected to;
// one that redirects is not followed; one that fails with a secret in its
// body never has the body repeated and, after 5 failures in a row, is no
// longer called (its breaker is open).
func TestWebhookCallsContained(t *testing.T) {
	cert, caPEM := webhookCert(t)
	denied := startHookServer(t, "127.0.0.1", cert, func(w http.ResponseWriter, r *http.Request) {})
	target := startHookServer(t, "127.0.0.2", cert, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unreachable", http.StatusInternalServerError)
	})
	redirector := startHookServer(t, "127.0.0.2", cert, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/hook", http.StatusTemporaryRedirect)
	})
	leaky := startHookServer(t, "127.0.0.2", cert, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, webhookSecret, http.StatusInternalServerError)
	})
	h := startHub(t, "--webhook-allow-cidrs", "127.0.0.2/32")
	manifests := webhookConfig("denied", denied.URL, "Deployment", caPEM) +
		webhookConfig("redirect", redirector.URL, "StatefulSet", caPEM) +
		webhookConfig("leaky", leaky.URL, "ReplicaSet", caPEM) +
		workloadOf("Deployment", "d") + workloadOf("StatefulSet", "s") + workloadOf("ReplicaSet", "r") +
		"---\napiVersion: policy.tether.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: hooks}\nspec:\n" +
		"  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment}\n  - {apiVersion: apps/v1, kind: StatefulSet}\n" +
		"  - {apiVersion: apps/v1, kind: ReplicaSet}\n  placement:\n    clusterAffinity:\n      clusterNames: [nowhere]\n"
	file := filepath.Join(t.TempDir(), "hooks.yaml")
	if err := os.WriteFile(file, []byte(manifests), 0o600); err != nil {
		t.Fatal(err)
	}
	mustCtl(t, h.adminConf(), "apply", "-f", file)

	for _, want := range []string{"destination denied: 127.0.0.1 is loopback", "HTTP status 307", "circuit breaker open"} {
		poll(t, 60*time.Second, "hub log saying "+want, func() (bool, string) {
			return strings.Contains(readFile(h.log), want), ""
		})
	}
	// The breaker opened after 5 failures: the leaky webhook was called 5
	// times, and no call after.
	if n := leaky.hits.Load(); n != 5 {
		t.Errorf("leaky webhook received %d requests when its breaker opened; want 5", n)
	}
	if c := denied.conns.Load(); c != 0 {
		t.Errorf("denied webhook on 127.0.0.1 accepted %d connections; want 0", c)
	}
	if n := redirector.hits.Load(); n == 0 {
		t.Errorf("redirecting webhook received no request; want it called")
	}
	if n := target.hits.Load(); n != 0 {
		t.Errorf("redirect target received %d requests; want 0 (redirects not followed)", n)
	}
	for _, line := range strings.Split(readFile(h.log), "\n") {
		if strings.Contains(line, "interpret replicas of") {
			t.Logf("hub: %s", strings.TrimSpace(line))
		}
	}
	if strings.Contains(readFile(h.log), "SECRET") {
		t.Errorf("hub log repeats the webhook's response body")
	}
}

func webhookConfig(name, url, kind string, caPEM []byte) string {
	return fmt.Sprintf(`---
apiVersion: config.tether.io/v1alpha1
kind: ResourceInterpreterWebhookConfiguration
metadata: {name: %s}
webhooks:
- name: %s.hooks.example.com
  clientConfig: {url: %q, caBundle: %s}
  rules: [{operations: [InterpretReplica], apiGroups: [apps], apiVersions: [v1], kinds: [%s]}]
  timeoutSeconds: 2
  interpreterContextVersions: [v1alpha1]
`, name, name, url, base64.StdEncoding.EncodeToString(caPEM), kind)
}

func workloadOf(kind, name string) string {
	return fmt.Sprintf(`---
apiVersion: apps/v1
kind: %s
metadata: {name: %s, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec: {containers: [{name: main, image: nginx}]}
`, kind, name, name, name)
}

// webhookCert is a self-signed serving certificate for 127.0.0.1 and
// 127.0.0.2 and its PEM, the webhooks' caBundle.
func webhookCert(t *testing.T) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("127.0.0.2")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
