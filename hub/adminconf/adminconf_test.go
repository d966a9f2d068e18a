package adminconf

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/adminconf/adminconftest"
	"github.com/tetherproj/tether/hub/pki"
)

// TestAdminConfRenewal: at start (Ensure) and while the hub runs (keep,
// each of whose checks is check), admin.conf's certificate is replaced
// once two thirds of its validity have passed, for the identity it had;
// one with time left, or one another CA signed, is left byte for byte.
func TestAdminConfRenewal(t *testing.T) {
	now := time.Now()
	viewer := pki.Identity{Name: "ops", Kind: pki.KindViewer}
	for _, tc := range []struct {
		name              string
		id                pki.Identity
		notBefore, expiry time.Time
		otherCA           bool
		want              bool // renewed
	}{
		{"expired", viewer, now.Add(-2 * time.Hour), now.Add(-time.Hour), false, true},
		{"a fifth left", viewer, now.Add(-4 * time.Hour), now.Add(time.Hour), false, true},
		{"half left", viewer, now.Add(-time.Hour), now.Add(time.Hour), false, false},
		{"another CA's, expired", viewer, now.Add(-2 * time.Hour), now.Add(-time.Hour), true, false},
	} {
		for _, running := range []bool{false, true} {
			name := tc.name + map[bool]string{false: " at start", true: " while running"}[running]
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				caDir := filepath.Join(dir, "pki")
				signer := caDir
				if tc.otherCA {
					signer = filepath.Join(dir, "other")
				}
				path := filepath.Join(dir, "admin.conf")
				before := adminconftest.Write(t, path, signer, tc.id, tc.notBefore, tc.expiry, "10.0.0.1:7443")
				ca, err := pki.LoadOrCreateCA(caDir)
				if err != nil {
					t.Fatal(err)
				}
				a := File{Path: path, CA: ca, Server: "127.0.0.1:7443", Logger: hclog.NewNullLogger()}
				switch {
				case running && tc.want:
					ctx, cancel := context.WithCancel(context.Background())
					done := make(chan error, 1)
					go func() { done <- a.keep(10 * time.Millisecond)(ctx) }()
					defer func() { cancel(); <-done }()
					pollRenewed(t, a.Path, before)
				case running:
					a.check(time.Hour)
				default:
					if err := a.Ensure(); err != nil {
						t.Fatalf("ensure: %v", err)
					}
				}
				after, _ := os.ReadFile(a.Path)
				if renewed := !bytes.Equal(before, after); renewed != tc.want {
					t.Fatalf("admin.conf renewed = %v; want %v", renewed, tc.want)
				}
				if !tc.want {
					return
				}
				c, leaf := adminconftest.Cert(t, a.Path)
				if id, err := pki.IdentityOf(leaf); err != nil || id != tc.id || c.Server != "10.0.0.1:7443" {
					t.Errorf("renewed for %v (%v), server %q; want %v, 10.0.0.1:7443", id, err, c.Server, tc.id)
				}
				if err := leaf.CheckSignatureFrom(ca.Cert); err != nil || !leaf.NotAfter.After(now.Add(CertLifetime-time.Hour)) {
					t.Errorf("renewed certificate until %s (%v); want the hub CA's, for a year", leaf.NotAfter, err)
				}
			})
		}
	}
}

// pollRenewed waits until the file at path differs from before.
func pollRenewed(t *testing.T, path string, before []byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if after, err := os.ReadFile(path); err == nil && !bytes.Equal(after, before) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not renewed within 10s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
