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

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
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

	for _, want := range []string{"destination denied: 127.0.0.1 is loopback", "HTTP status 307"} {
		poll(t, 60*time.Second, "hub log saying "+want, func() (bool, string) {
			return strings.Contains(readFile(h.log), want), ""
		})
	}
	// Every webhook has its own breaker: wait for the leaky one's.
	poll(t, 60*time.Second, "hub log saying the leaky webhook's circuit breaker is open", func() (bool, string) {
		for _, line := range strings.Split(readFile(h.log), "\n") {
			if strings.Contains(line, "leaky.hooks.example.com") && strings.Contains(line, "circuit breaker open") {
				return true, ""
			}
		}
		return false, ""
	})
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

// webhookAttacks are hostile interpreter webhooks met by TestHostileInputs'
// hub, which allows 127.0.0.2/32 (--webhook-allow-cidrs) and so the
// webhooks listening there; everything else of the default policy's
// ranges (loopback, link-local, cloud metadata) stays denied. Each attack
// has its own made-up kind, so that the webhooks of two attacks never
// answer for one workload.
func webhookAttacks() []attack {
	return []attack{
		{"webhook at the cloud metadata address", func(t *testing.T, e *hostileEnv) string {
			e.hookAttack(t, "Metadata", "https://169.254.169.254/latest/meta-data/", "destination denied: 169.254.169.254 is link-local")
			return "refused: destination denied before connecting"
		}},
		{"webhook on loopback", func(t *testing.T, e *hostileEnv) string {
			denied := startHookServer(t, "127.0.0.1", e.hookCert(t), func(w http.ResponseWriter, r *http.Request) {})
			e.hookAttack(t, "Loopback", denied.URL, "destination denied: 127.0.0.1 is loopback")
			if c := denied.conns.Load(); c != 0 {
				t.Errorf("webhook on 127.0.0.1 accepted %d connections; want 0", c)
			}
			return "refused: destination denied, never connected"
		}},
		{"webhook redirecting to loopback", func(t *testing.T, e *hostileEnv) string {
			target := startHookServer(t, "127.0.0.1", e.hookCert(t), func(w http.ResponseWriter, r *http.Request) {})
			redirector := startHookServer(t, "127.0.0.2", e.hookCert(t), func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/hook", http.StatusTemporaryRedirect)
			})
			e.hookAttack(t, "RedirectLoopback", redirector.URL, "HTTP status 307")
			if c := target.conns.Load(); c != 0 {
				t.Errorf("redirect target on 127.0.0.1 accepted %d connections; want 0 (redirects not followed)", c)
			}
			return "refused: redirect not followed"
		}},
		{"webhook redirecting to the metadata address", func(t *testing.T, e *hostileEnv) string {
			redirector := startHookServer(t, "127.0.0.2", e.hookCert(t), func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/security-credentials/", http.StatusFound)
			})
			e.hookAttack(t, "RedirectMetadata", redirector.URL, "HTTP status 302")
			return "refused: redirect not followed"
		}},
		{"webhook error body with a secret", func(t *testing.T, e *hostileEnv) string {
			leaky := startHookServer(t, "127.0.0.2", e.hookCert(t), func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, webhookSecret, http.StatusInternalServerError)
			})
			placement := e.hookAttack(t, "Leaky", leaky.URL, "HTTP status 500")
			if strings.Contains(readFile(e.h.log), "SECRET") || strings.Contains(placement, "SECRET") {
				t.Errorf("the hub repeats the webhook's response body (log or placement %.300s)", placement)
			}
			return "contained: status kept, body dropped"
		}},
	}
}

// hookCert is the webhooks' serving certificate, made once per env.
func (e *hostileEnv) hookCert(t *testing.T) tls.Certificate {
	if e.hook.caPEM == nil {
		e.hook.cert, e.hook.caPEM = webhookCert(t)
	}
	return e.hook.cert
}

// hookAttack applies a webhook configuration at url for the made-up kind
// example.com/v1 kind, a workload of that kind and a policy placing it,
// waits for the hub's log to say want about interpreting the workload,
// and deletes the three again. It returns the workload's placement as
// GetPlacement shows it.
func (e *hostileEnv) hookAttack(t *testing.T, kind, url, want string) string {
	t.Helper()
	e.hookCert(t)
	name := strings.ToLower(kind)
	manifests := fmt.Sprintf(`apiVersion: config.tether.io/v1alpha1
kind: ResourceInterpreterWebhookConfiguration
metadata: {name: hook-%[1]s}
webhooks:
- name: %[1]s.hooks.example.com
  clientConfig: {url: %[3]q, caBundle: %[4]s}
  rules: [{operations: [InterpretReplica], apiGroups: [example.com], apiVersions: [v1], kinds: [%[2]s]}]
  timeoutSeconds: 2
  interpreterContextVersions: [v1alpha1]
---
apiVersion: example.com/v1
kind: %[2]s
metadata: {name: %[1]s, namespace: default}
spec: {replicas: 2}
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: hook-%[1]s, namespace: default}
spec:
  resourceSelectors: [{apiVersion: example.com/v1, kind: %[2]s, name: %[1]s}]
  placement:
    clusterAffinity: {clusterNames: [nowhere]}
`, name, kind, url, base64.StdEncoding.EncodeToString(e.hook.caPEM))
	if _, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(manifests)}); err != nil {
		t.Fatalf("apply the webhook, its workload and policy: %v", err)
	}
	refs := []*hubv1.ObjectRef{
		{ApiVersion: "policy.tether.io/v1alpha1", Kind: "PropagationPolicy", Namespace: "default", Name: "hook-" + name},
		{ApiVersion: "example.com/v1", Kind: kind, Namespace: "default", Name: name},
		{ApiVersion: "config.tether.io/v1alpha1", Kind: "ResourceInterpreterWebhookConfiguration", Name: "hook-" + name},
	}
	defer e.deleteAll(t, refs)
	about := fmt.Sprintf("interpret replicas of %s default/%s", kind, name)
	poll(t, 60*time.Second, "hub log saying "+want+" in "+about, func() (bool, string) {
		for _, line := range strings.Split(readFile(e.h.log), "\n") {
			if strings.Contains(line, about) && strings.Contains(line, want) {
				t.Logf("hub: %.400s", strings.TrimSpace(line))
				return true, ""
			}
		}
		return false, ""
	})
	resp, err := hubv1.NewPlacementServiceClient(e.admin).GetPlacement(rpcCtx(t), &hubv1.GetPlacementRequest{Template: refs[1]})
	if err != nil && status.Code(err) != codes.NotFound {
		t.Errorf("GetPlacement of %s: %v", name, err)
	}
	return resp.String()
}
