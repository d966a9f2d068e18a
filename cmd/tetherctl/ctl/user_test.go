package ctl_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestUserCreatePEM: user create --pem DIR writes the hub CA, the user's
// certificate and its key as PEM files (the key 0600), which make a key
// pair whose certificate the CA verifies; a second run refuses to
// overwrite them, before anything is issued.
func TestUserCreatePEM(t *testing.T) {
	h := startAdminHub(t)
	dir := filepath.Join(t.TempDir(), "bob")
	out := mustRun(t, h.admin, "user", "create", "bob", "--role", "viewer", "--pem", dir)
	if !strings.Contains(out, filepath.Join(dir, "key.pem")) {
		t.Errorf("user create --pem = %q; want it to name the files written", out)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil {
		t.Fatalf("cert.pem and key.pem: %v", err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("ca.pem holds no certificate: %q", caPEM)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("cert.pem does not verify against ca.pem: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "key.pem")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key.pem: %v, %v; want mode 0600", st.Mode(), err)
	}
	code, _, errOut := runWith(t, h.admin, "", "user", "create", "bob", "--role", "viewer", "--pem", dir)
	if code == 0 || !strings.Contains(errOut, "exists") {
		t.Errorf("user create --pem into the same directory = %d, %q; want refused, naming the existing file", code, errOut)
	}
}

// TestUserRoles: user create --role editor --namespace stores the role
// bound to the namespaces (a comma list or repeated), user roles lists it,
// user set-role changes it, and an unknown role is refused before the hub
// is asked.
func TestUserRoles(t *testing.T) {
	h := startAdminHub(t)
	conf := filepath.Join(t.TempDir(), "carol.conf")
	out := mustRun(t, h.admin, "user", "create", "carol", "--role", "editor", "--namespace", "team-a,team-b", "--namespace", "team-c", "-o", conf)
	if !strings.Contains(out, "(editor of team-a, team-b, team-c)") {
		t.Errorf("user create = %q; want it to say editor of team-a, team-b, team-c", out)
	}
	if out := mustRun(t, h.admin, "user", "roles"); !regexp.MustCompile(`carol\s+editor\s+team-a,team-b,team-c\s`).MatchString(out) {
		t.Errorf("user roles = %q; want carol, editor of team-a,team-b,team-c", out)
	}
	if out := mustRun(t, h.admin, "user", "set-role", "carol", "--role", "viewer"); !strings.Contains(out, "user/carol is fleet-wide viewer") {
		t.Errorf("user set-role = %q; want carol a fleet-wide viewer", out)
	}
	if out := mustRun(t, h.admin, "user", "roles"); !regexp.MustCompile(`carol\s+viewer\s+\*\s`).MatchString(out) {
		t.Errorf("user roles after set-role = %q; want carol, viewer of every namespace", out)
	}
	code, _, errOut := runWith(t, h.admin, "", "user", "set-role", "carol", "--role", "owner")
	if code == 0 || !strings.Contains(errOut, "want viewer, editor or admin") {
		t.Errorf("user set-role --role owner = %d, %q; want refused naming the roles", code, errOut)
	}
	code, _, errOut = runWith(t, h.admin, "", "user", "set-role", "alice", "--role", "viewer") // the admin connected
	if code == 0 || !strings.Contains(errOut, "you are connected as user \"alice\"") {
		t.Errorf("user set-role of the admin connected = %d, %q; want refused", code, errOut)
	}
	code, _, errOut = runWith(t, h.admin, "", "user", "set-role", "carol", "--role", "editor", "--namespace", "Team_A")
	if code == 0 || !strings.Contains(errOut, `namespace "Team_A"`) {
		t.Errorf("user set-role --namespace Team_A = %d, %q; want refused naming the namespace", code, errOut)
	}
}
