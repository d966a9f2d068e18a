package hub

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/cmd/tetherctl/ctl"
	"github.com/tetherproj/tether/hub/adminconf"
	"github.com/tetherproj/tether/hub/adminconf/adminconftest"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/internal/clientconfig"
)

// TestExpiredAdminConfRenewedAtStart: a hub started on a data directory
// whose admin.conf certificate expired an hour ago renews it, for a year,
// keeping the server the user wrote; tetherctl (in-process) with the file
// pointed at the hub lists tokens (admin only), and with the expired
// certificate is refused. Before, admin.conf was never rewritten and
// stayed unusable.
func TestExpiredAdminConfRenewedAtStart(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	path := filepath.Join(dir, AdminConfFile)
	old := adminconftest.Write(t, path, filepath.Join(dir, PKIDir), pki.Identity{Name: adminconf.User, Kind: pki.KindAdmin},
		now.Add(-2*time.Hour), now.Add(-time.Hour), "hub.example.com:7443")
	addr := runHub(t, dir, Config{}, nil)

	c, leaf := adminconftest.Cert(t, path)
	if c.Server != "hub.example.com:7443" {
		t.Errorf("renewed admin.conf names %q; want the server it had, hub.example.com:7443", c.Server)
	}
	if life := time.Until(leaf.NotAfter); life < adminconf.CertLifetime-time.Hour {
		t.Errorf("admin.conf's certificate valid %s more; want about %s", life.Round(time.Second), adminconf.CertLifetime)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("admin.conf after renewal: %v, mode %v; want 0600", err, info.Mode().Perm())
	}
	if code, errOut := tetherctl(t, c, addr, "token", "list"); code != 0 {
		t.Errorf("tetherctl token list with the renewed admin.conf = %d, %q; want 0", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "old.conf"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	expired, _ := adminconftest.Cert(t, filepath.Join(dir, "old.conf"))
	if code, errOut := tetherctl(t, expired, addr, "token", "list"); code == 0 || !strings.Contains(errOut, "expired at") {
		t.Errorf("tetherctl token list with the expired certificate = %d, %q; want refused, saying it expired", code, errOut)
	}
}

// tetherctl runs tetherctl in-process with the credentials of c pointed at
// addr, and returns its exit code and stderr.
func tetherctl(t *testing.T, c *clientconfig.Config, addr string, args ...string) (int, string) {
	t.Helper()
	conf := *c
	conf.Server = addr
	path := filepath.Join(t.TempDir(), "tetherctl.conf")
	if err := conf.Write(path); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errOut bytes.Buffer
	code := ctl.Run(ctx, append([]string{"--config", path}, args...), strings.NewReader(""), io.Discard, &errOut)
	return code, errOut.String()
}
