package membership

import (
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in     string
		id     string
		wantOK bool
	}{
		{"abcdef.0123456789abcdef", "abcdef", true},
		{"abcdef.0123456789abcde", "", false},    // short secret
		{"ABCDEF.0123456789abcdef", "", false},   // upper case
		{"abcdef0123456789abcdef", "", false},    // no dot
		{"abcdef.0123456789abcdef\n", "", false}, // trailing newline
		{"", "", false},
		{"abc.def", "", false},
		{"abcdef.0123456789abcdef.x", "", false},
	}
	for _, tt := range tests {
		id, _, err := Parse(tt.in)
		if (err == nil) != tt.wantOK || id != tt.id {
			t.Errorf("Parse(%q) = %q, %v; want %q, ok %v", tt.in, id, err, tt.id, tt.wantOK)
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) error %v; want ErrMalformed", tt.in, err)
		}
	}
	for in, want := range map[string]string{"abcdef": "abcdef", "abcdef.0123456789abcdef": "abcdef", "abc": "", "ABCDEF": "", "abcde!": ""} {
		if got, err := ParseID(in); got != want || (err == nil) != (want != "") {
			t.Errorf("ParseID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestGenerateParses(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id, secret, err := generate()
		if err != nil {
			t.Fatal(err)
		}
		if gotID, gotSecret, err := Parse(id + "." + secret); err != nil || gotID != id || gotSecret != secret {
			t.Fatalf("Parse(generate()) = %q, %q, %v; want %q, %q", gotID, gotSecret, err, id, secret)
		}
		if seen[id] {
			t.Errorf("generate() repeated id %q", id)
		}
		seen[id] = true
	}
}

func TestCheck(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	base := Token{ID: "abcdef", SecretHash: hashSecret("0123456789abcdef"), Expires: now.Add(time.Hour)}
	tests := []struct {
		name    string
		modify  func(*Token)
		secret  string
		cluster string
		want    string // in the error; "" for accepted
	}{
		{"valid", func(*Token) {}, "0123456789abcdef", "edge-1", ""},
		{"wrong secret", func(*Token) {}, "0123456789abcdee", "edge-1", "wrong secret"},
		{"expired", func(t *Token) { t.Expires = now }, "0123456789abcdef", "edge-1", "expired"},
		{"used up", func(t *Token) { t.Uses, t.Used = 1, 1 }, "0123456789abcdef", "edge-1", "used up"},
		{"uses left", func(t *Token) { t.Uses, t.Used = 2, 1 }, "0123456789abcdef", "edge-1", ""},
		{"other cluster", func(t *Token) { t.Cluster = "edge-2" }, "0123456789abcdef", "edge-1", "only cluster"},
		{"its cluster", func(t *Token) { t.Cluster = "edge-1" }, "0123456789abcdef", "edge-1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := base
			tt.modify(&tok)
			err := tok.check(tt.secret, tt.cluster, now)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("check = %v; want accepted", err)
			case tt.want != "" && (err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("check = %v; want ErrRefused saying %q", err, tt.want)
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	removed := time.Now()
	tests := []struct {
		name   string
		rec    *Agent
		exists bool
		want   admission
	}{
		{"new name", nil, false, admitBind},
		{"minted cluster", nil, true, admitPending},
		{"same key", &Agent{KeyFingerprint: "k1"}, true, admitSame},
		{"other key", &Agent{KeyFingerprint: "k0"}, true, admitPending},
		{"removed", &Agent{KeyFingerprint: "k0", Removed: &removed}, false, admitBind},
		{"pending minted cluster, same new key", &Agent{PendingKeyFingerprint: "k1"}, true, admitPending},
	}
	for _, tt := range tests {
		if got := admit(tt.rec, tt.exists, "k1"); got != tt.want {
			t.Errorf("admit(%s) = %v; want %v", tt.name, got, tt.want)
		}
	}
}

func TestAuthorizeAndApprove(t *testing.T) {
	cert := &x509.Certificate{RawSubjectPublicKeyInfo: []byte("key-1")}
	fp := Fingerprint(cert.RawSubjectPublicKeyInfo)
	removed := time.Now()
	now := removed
	tests := []struct {
		name string
		rec  *Agent
		ok   bool
	}{
		{"no record (minted)", nil, true},
		{"bound to this key", &Agent{Cluster: "c", KeyFingerprint: fp}, true},
		{"bound to another key", &Agent{Cluster: "c", KeyFingerprint: "sha256:00"}, false},
		{"pending only (minted)", &Agent{Cluster: "c", PendingKeyFingerprint: "sha256:00"}, true},
		{"removed", &Agent{Cluster: "c", KeyFingerprint: fp, Removed: &removed}, false},
		{"renewed, old certificate still valid", &Agent{Cluster: "c", KeyFingerprint: "sha256:00", PreviousKeyFingerprint: fp, PreviousNotAfter: now.Add(time.Second)}, true},
		{"renewed, old certificate expired", &Agent{Cluster: "c", KeyFingerprint: "sha256:00", PreviousKeyFingerprint: fp, PreviousNotAfter: now}, false},
		{"renewed, then removed", &Agent{Cluster: "c", KeyFingerprint: "sha256:00", PreviousKeyFingerprint: fp, PreviousNotAfter: now.Add(time.Hour), Removed: &removed}, false},
	}
	for _, tt := range tests {
		err := authorize(tt.rec, cert, now)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrRevoked)) {
			t.Errorf("authorize(%s) = %v; want ok %v (ErrRevoked otherwise)", tt.name, err, tt.ok)
		}
	}

	rec := Agent{Cluster: "c", KeyFingerprint: "old", PendingKeyFingerprint: fp}
	if _, err := approve(rec, "sha256:other"); !errors.Is(err, ErrNoPending) {
		t.Errorf("approve(another key) = %v; want ErrNoPending", err)
	}
	if _, err := approve(Agent{Cluster: "c", KeyFingerprint: "old"}, ""); !errors.Is(err, ErrNoPending) {
		t.Errorf("approve(nothing pending) = %v; want ErrNoPending", err)
	}
	got, err := approve(rec, fp)
	if err != nil || got.KeyFingerprint != fp || got.PendingKeyFingerprint != "" {
		t.Errorf("approve(pending key) = %+v, %v; want it bound", got, err)
	}
	if err := authorize(&got, cert, now); err != nil {
		t.Errorf("authorize(approved key) = %v; want nil", err)
	}
	if err := authorize(&got, &x509.Certificate{RawSubjectPublicKeyInfo: []byte("old")}, now); !errors.Is(err, ErrRevoked) {
		t.Errorf("authorize(replaced key) = %v; want ErrRevoked", err)
	}
}
