package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/internal/durable"
)

// The admin's credentials file.
const (
	// AdminUser is the identity of the admin certificate in admin.conf.
	AdminUser = "admin"
	// AdminCertLifetime is the validity of admin.conf's certificate: one
	// year. It is renewed once less than a third of it is left.
	AdminCertLifetime = 365 * 24 * time.Hour
	// adminConfCheckInterval is how often a running hub checks whether
	// admin.conf's certificate is due for renewal: one hour, against a
	// renewal margin of months.
	adminConfCheckInterval = time.Hour
)

// adminConf is DATA_DIR/admin.conf. It is written on first start; after
// that only its certificate, key and CA are replaced, when less than a
// third of the certificate's validity is left (at start and while the hub
// runs), for the same identity. The rest (the server a user may have
// edited) is kept. Each write replaces the file whole: a reader sees the
// old or the new one.
type adminConf struct {
	path   string
	ca     *pki.CA
	server string // written into a new file; an existing one keeps its own
	logger hclog.Logger
}

// adminConf is the hub's admin.conf, for a hub listening on addr.
func (h *Hub) adminConf(ca *pki.CA, addr string) adminConf {
	return adminConf{path: h.cfg.path(AdminConfFile), ca: ca, server: dialAddr(addr), logger: h.logger}
}

// keepAdminConf renews admin.conf while the hub runs (adminConf.keep).
func (h *Hub) keepAdminConf(ca *pki.CA, addr net.Addr) func(ctx context.Context) error {
	return h.adminConf(ca, addr.String()).keep(adminConfCheckInterval)
}

// ensure makes admin.conf usable at start: written if it does not exist,
// renewed if due. A file that exists but cannot be read is an error (it is
// the user's to remove); one whose server is not the hub's address, or
// whose certificate another CA signed, is left as it is with a warning.
func (a adminConf) ensure() error {
	old, err := clientconfig.Load(a.path)
	if err != nil {
		if _, statErr := os.Stat(a.path); statErr == nil {
			return fmt.Errorf("admin.conf %s exists but is unusable (remove it to get a new one): %w", a.path, err)
		}
		return a.create()
	}
	if old.Server != a.server {
		a.logger.Warn("admin.conf names another address; it is kept, the actual one is in hub.addr",
			"path", a.path, "admin_conf_server", old.Server, "listen", a.server)
	}
	if err := a.renewIfDue(old, time.Now()); errors.Is(err, errOtherCA) {
		a.logger.Warn("admin.conf's certificate is not signed by this hub's CA; it is never renewed (remove it to get a new one)", "path", a.path)
	} else if err != nil {
		return err
	}
	return nil
}

// keep renews admin.conf while the hub runs, checking every interval. A
// failed renewal is logged and tried again at the next check; a missing
// file (the user moved it away) stays missing until the next start.
func (a adminConf) keep(interval time.Duration) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
			a.check(interval)
		}
	}
}

// check is one check of keep: admin.conf renewed if due, a failure logged.
func (a adminConf) check(interval time.Duration) {
	if _, err := os.Stat(a.path); errors.Is(err, os.ErrNotExist) {
		return
	}
	old, err := clientconfig.Load(a.path)
	if err == nil {
		err = a.renewIfDue(old, time.Now())
	}
	if err != nil && !errors.Is(err, errOtherCA) {
		a.logger.Warn("admin.conf not renewed; trying again later", "path", a.path, "error", err, "retry_in", interval)
	}
}

// errOtherCA: admin.conf's certificate is not this hub's to renew.
var errOtherCA = errors.New("admin.conf: certificate not signed by the hub CA")

// renewIfDue replaces the certificate of old, loaded from a.path, when
// less than a third of its validity is left at now.
func (a adminConf) renewIfDue(old *clientconfig.Config, now time.Time) error {
	leaf, err := certs.ParseCertificate([]byte(old.ClientCertificate))
	if err != nil {
		return fmt.Errorf("admin.conf %s: client certificate: %w", a.path, err)
	}
	if leaf.CheckSignatureFrom(a.ca.Cert) != nil {
		return errOtherCA
	}
	if now.Before(adminRenewAt(leaf.NotBefore, leaf.NotAfter)) {
		return nil
	}
	id, err := pki.IdentityOf(leaf)
	if err != nil {
		return fmt.Errorf("admin.conf %s: %w", a.path, err)
	}
	issued, err := a.ca.IssueClient(id, AdminCertLifetime)
	if err != nil {
		return fmt.Errorf("renew admin.conf certificate: %w", err)
	}
	renewed := *old
	renewed.CertificateAuthority, renewed.ClientCertificate, renewed.ClientKey = string(a.ca.CertPEM), string(issued.CertPEM), string(issued.KeyPEM)
	data, err := renewed.Marshal()
	if err != nil {
		return fmt.Errorf("renew admin.conf: %w", err)
	}
	if err := durable.WriteFile(a.path, data, 0o600); err != nil {
		return fmt.Errorf("renew admin.conf: %w", err)
	}
	a.logger.Info("admin.conf certificate renewed", "path", a.path, "user", id.Name,
		"old_not_after", leaf.NotAfter.UTC(), "not_after", issued.Cert.NotAfter.UTC())
	return nil
}

// adminRenewAt is when a certificate valid from notBefore to notAfter is
// renewed: once two thirds of that time have passed.
func adminRenewAt(notBefore, notAfter time.Time) time.Time {
	return notBefore.Add(notAfter.Sub(notBefore) * 2 / 3)
}

// create writes a new admin.conf naming a.server.
func (a adminConf) create() error {
	issued, err := a.ca.IssueClient(pki.Identity{Name: AdminUser, Kind: pki.KindAdmin}, AdminCertLifetime)
	if err != nil {
		return fmt.Errorf("issue admin certificate: %w", err)
	}
	c := &clientconfig.Config{
		Server: a.server, User: AdminUser, CertificateAuthority: string(a.ca.CertPEM),
		ClientCertificate: string(issued.CertPEM), ClientKey: string(issued.KeyPEM),
	}
	data, err := c.Marshal()
	if err != nil {
		return fmt.Errorf("write admin.conf: %w", err)
	}
	// Readers never see half a file; one another process made meanwhile is
	// kept.
	if err := durable.CreateFile(a.path, data, 0o600); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("write admin.conf: %w", err)
	}
	a.logger.Info("admin credentials written", "path", a.path, "user", AdminUser)
	return nil
}
