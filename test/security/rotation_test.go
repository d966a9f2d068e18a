package security

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/test/proc"
	"github.com/tetherproj/tether/test/tier"
)

// certLifetime is the agent certificate lifetime of the rotation test: the
// shortest the hub allows, so that a renewal (at 70–80% of it) and the old
// certificate's expiry both happen within the test.
const certLifetime = time.Minute

// TestCertificateRotationKeepsTheStream (issue 6: "a certificate with a
// one-minute lifetime is renewed without dropping the stream"): a hub
// issuing one-minute certificates, a tether-agent registered by token. At
// about 75% of the lifetime the agent's tls.crt and tls.key are replaced
// by a new certificate (new serial) for a new key, while its one stream
// stays up (the hub started one stream for the cluster and ended none; the
// agent never reconnected). Once the old certificate has expired, a
// reconnect is forced (another stream supersedes the agent's) and the
// agent's new handshake, with the renewed certificate, is accepted; the
// old certificate is refused.
func TestCertificateRotationKeepsTheStream(t *testing.T) {
	tier.Long(t, fmt.Sprintf("waits out a certificate of %s", certLifetime))
	h := startHub(t, "--agent-cert-lifetime", certLifetime.String())
	tok := createToken(t, h, "--cluster", "edge-1", "--uses", "1")
	data, agentLog := startAgent(t, h, tok, "edge-1")
	crt, key := filepath.Join(data, "tls.crt"), filepath.Join(data, "tls.key")

	var first *x509.Certificate
	poll(t, 30*time.Second, "the agent registered and streaming", func() (bool, string) {
		first, _ = readCert(crt)
		return first != nil && streamsOf(h, "agent stream started") == 1, tail(agentLog)
	})
	written := modTime(t, crt)
	firstKey, _ := os.ReadFile(key)
	if life := first.NotAfter.Sub(written); life > certLifetime || life < certLifetime-10*time.Second {
		t.Fatalf("registered certificate valid %s after it was written; want the hub's --agent-cert-lifetime %s", life, certLifetime)
	}

	var renewed *x509.Certificate
	poll(t, time.Until(first.NotAfter), "tls.crt renewed before the old one expired", func() (bool, string) {
		renewed, _ = readCert(crt)
		return renewed != nil && renewed.SerialNumber.Cmp(first.SerialNumber) != 0, tail(agentLog)
	})
	at := modTime(t, crt).Sub(written)
	t.Logf("renewed %s after registration (lifetime %s)", at.Round(100*time.Millisecond), certLifetime)
	if lo, hi := certLifetime*65/100, certLifetime*85/100; at < lo || at > hi {
		t.Errorf("renewed %s after registration; want at about 75%% of %s (%s–%s)", at, certLifetime, lo, hi)
	}
	newKey, _ := os.ReadFile(key)
	switch {
	case bytes.Equal(renewed.RawSubjectPublicKeyInfo, first.RawSubjectPublicKeyInfo), bytes.Equal(newKey, firstKey):
		t.Errorf("the renewed certificate is for the old key; want a new key")
	case renewed.Subject.CommonName != "edge-1" || !renewed.NotAfter.After(first.NotAfter):
		t.Errorf("renewed certificate of %q until %s; want edge-1 past %s", renewed.Subject.CommonName, renewed.NotAfter, first.NotAfter)
	}
	if _, err := certs.ParsePrivateKey(newKey); err != nil {
		t.Errorf("tls.key after the renewal: %v", err)
	}
	if info, err := os.Stat(key); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("tls.key after the renewal: %v, mode %v; want 0600", err, info.Mode().Perm())
	}
	if !strings.Contains(readFile(h.log), "agent certificate renewed over the stream") {
		t.Errorf("the hub's log does not say it renewed the certificate over the stream")
	}

	// The old certificate expires; the stream it opened goes on.
	time.Sleep(time.Until(first.NotAfter) + time.Second)
	sameStream(t, h, agentLog)
	old := registration{certPEM: certs.EncodeCertificate(first.Raw), keyPEM: firstKey, caPool: pinnedPool(t, h.addr, tok.CAHash)}
	if _, err := openStream(t, h, old); err == nil {
		t.Errorf("Connect with the expired old certificate succeeded; want refused")
	}

	// A reconnect: a stream with the renewed credentials supersedes the
	// agent's, which comes back over a new handshake and supersedes it.
	cur := registration{certPEM: certs.EncodeCertificate(renewed.Raw), keyPEM: newKey, caPool: old.caPool}
	s, err := openStream(t, h, cur)
	if err != nil {
		t.Fatalf("Connect with the renewed certificate: %v", err)
	}
	bye, err, ended := s.ended(15 * time.Second)
	if !ended || bye.GetReason() != agentv1.DisconnectReason_DISCONNECT_REASON_SUPERSEDED {
		t.Fatalf("the agent did not reconnect after the old certificate expired: test stream ended %v, goodbye %v, %v\nagent log:\n%s",
			ended, bye, err, tail(agentLog))
	}
	if n := streamsOf(h, "agent stream started"); n != 3 {
		t.Errorf("%d streams of edge-1 started; want 3 (the agent's, the test's, the agent's again)", n)
	}
}

// startAgent runs tether-agent registering cluster with tok; it is stopped
// when the test ends. It returns its data directory and log file.
func startAgent(t *testing.T, h *hubProc, tok token, cluster string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	data, kubeconfig, logf := filepath.Join(dir, "data"), filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "agent.log")
	if err := os.WriteFile(kubeconfig, []byte(fakeKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := proc.Start(procs, proc.Config{Name: "tether-agent " + cluster, Bin: agentBin, LogPath: logf,
		Args: []string{"--hub", h.addr, "--token", tok.Token, "--ca-hash", tok.CAHash, "--cluster", cluster,
			"--kubeconfig", kubeconfig, "--data-dir", data, "--log-level", "debug"}})
	if err != nil {
		t.Fatal(err)
	}
	proc.StopAtEnd(t, p, stopGrace)
	return data, logf
}

// sameStream checks that the agent's first stream is still its only one.
func sameStream(t *testing.T, h *hubProc, agentLog string) {
	t.Helper()
	started, ended := streamsOf(h, "agent stream started"), streamsOf(h, "agent stream ended")
	if started != 1 || ended != 0 || strings.Contains(readFile(agentLog), "hub stream ended") {
		t.Errorf("streams of edge-1 started %d, ended %d; want the first one still up\nagent log:\n%s", started, ended, tail(agentLog))
	}
}

// streamsOf counts the hub's log lines with msg about edge-1.
func streamsOf(h *hubProc, msg string) int {
	n := 0
	for _, line := range strings.Split(readFile(h.log), "\n") {
		if strings.Contains(line, msg) && strings.Contains(line, "edge-1") {
			n++
		}
	}
	return n
}

func readCert(path string) (*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return certs.ParseCertificate(data)
}

func modTime(t *testing.T, path string) time.Time {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.ModTime()
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

// tail is the last lines of a log file.
func tail(path string) string {
	lines := strings.Split(readFile(path), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}
