package adminconf

import (
	"context"
	"errors"
	"fmt"
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
	// User is the identity of the admin certificate in admin.conf.
	User = "admin"
	// CertLifetime is the validity of admin.conf's certificate: one
	// year. It is renewed once less than a third of it is left.
	CertLifetime = 365 * 24 * time.Hour
	// checkInterval is how often a running hub checks whether
	// admin.conf's certificate is due for renewal: one hour, against a
	// renewal margin of months.
	checkInterval = time.Hour
)

// File is DATA_DIR/admin.conf. It is written on first start; after
// that only its certificate, key and CA are replaced, when less than a
// third of the certificate's validity is left (at start and while the hub
// runs), for the same identity. The rest (the server a user may have
// edited) is kept. Each write replaces the file whole: a reader sees the
// old or the new one.
type File struct {
	Path   string
	CA     *pki.CA
	Server string // written into a new file; an existing one keeps its own
	Logger hclog.Logger
}

// Run renews admin.conf while the hub runs, checking hourly, until ctx
// ends.
func (a File) Run(ctx context.Context) error { return a.keep(checkInterval)(ctx) }

// Ensure makes admin.conf usable at start: written if it does not exist,
// renewed if due. A file that exists but cannot be read is an error (it is
// the user's to remove); one whose server is not the hub's address, or
// whose certificate another CA signed, is left as it is with a warning.
func (a File) Ensure() error {
	old, err := clientconfig.Load(a.Path)
	if err != nil {
		if _, statErr := os.Stat(a.Path); statErr == nil {
			return fmt.Errorf("admin.conf %s exists but is unusable (remove it to get a new one): %w", a.Path, err)
		}
		return a.create()
	}
	if old.Server != a.Server {
		a.Logger.Warn("admin.conf names another address; it is kept, the actual one is in hub.addr",
			"path", a.Path, "admin_conf_server", old.Server, "listen", a.Server)
	}
	if err := a.renewIfDue(old, time.Now()); errors.Is(err, errOtherCA) {
		a.Logger.Warn("admin.conf's certificate is not signed by this hub's CA; it is never renewed (remove it to get a new one)", "path", a.Path)
	} else if err != nil {
		return err
	}
	return nil
}

// keep renews admin.conf while the hub runs, checking every interval. A
// failed renewal is logged and tried again at the next check; a missing
// file (the user moved it away) stays missing until the next start.
func (a File) keep(interval time.Duration) func(ctx context.Context) error {
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
func (a File) check(interval time.Duration) {
	if _, err := os.Stat(a.Path); errors.Is(err, os.ErrNotExist) {
		return
	}
	old, err := clientconfig.Load(a.Path)
	if err == nil {
		err = a.renewIfDue(old, time.Now())
	}
	if err != nil && !errors.Is(err, errOtherCA) {
		a.Logger.Warn("admin.conf not renewed; trying again later", "path", a.Path, "error", err, "retry_in", interval)
	}
}

// errOtherCA: admin.conf's certificate is not this hub's to renew.
var errOtherCA = errors.New("admin.conf: certificate not signed by the hub CA")

// renewIfDue replaces the certificate of old, loaded from a.Path, when
// less than a third of its validity is left at now.
func (a File) renewIfDue(old *clientconfig.Config, now time.Time) error {
	leaf, err := certs.ParseCertificate([]byte(old.ClientCertificate))
	if err != nil {
		return fmt.Errorf("admin.conf %s: client certificate: %w", a.Path, err)
	}
	if leaf.CheckSignatureFrom(a.CA.Cert) != nil {
		return errOtherCA
	}
	if now.Before(adminRenewAt(leaf.NotBefore, leaf.NotAfter)) {
		return nil
	}
	id, err := pki.IdentityOf(leaf)
	if err != nil {
		return fmt.Errorf("admin.conf %s: %w", a.Path, err)
	}
	issued, err := a.CA.IssueClient(id, CertLifetime)
	if err != nil {
		return fmt.Errorf("renew admin.conf certificate: %w", err)
	}
	renewed := *old
	renewed.CertificateAuthority, renewed.ClientCertificate, renewed.ClientKey = string(a.CA.CertPEM), string(issued.CertPEM), string(issued.KeyPEM)
	data, err := renewed.Marshal()
	if err != nil {
		return fmt.Errorf("renew admin.conf: %w", err)
	}
	if err := durable.WriteFile(a.Path, data, 0o600); err != nil {
		return fmt.Errorf("renew admin.conf: %w", err)
	}
	a.Logger.Info("admin.conf certificate renewed", "path", a.Path, "user", id.Name,
		"old_not_after", leaf.NotAfter.UTC(), "not_after", issued.Cert.NotAfter.UTC())
	return nil
}

// adminRenewAt is when a certificate valid from notBefore to notAfter is
// renewed: once two thirds of that time have passed.
func adminRenewAt(notBefore, notAfter time.Time) time.Time {
	return notBefore.Add(notAfter.Sub(notBefore) * 2 / 3)
}

// create writes a new admin.conf naming a.Server.
func (a File) create() error {
	issued, err := a.CA.IssueClient(pki.Identity{Name: User, Kind: pki.KindAdmin}, CertLifetime)
	if err != nil {
		return fmt.Errorf("issue admin certificate: %w", err)
	}
	c := &clientconfig.Config{
		Server: a.Server, User: User, CertificateAuthority: string(a.CA.CertPEM),
		ClientCertificate: string(issued.CertPEM), ClientKey: string(issued.KeyPEM),
	}
	data, err := c.Marshal()
	if err != nil {
		return fmt.Errorf("write admin.conf: %w", err)
	}
	// Readers never see half a file; one another process made meanwhile is
	// kept.
	if err := durable.CreateFile(a.Path, data, 0o600); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("write admin.conf: %w", err)
	}
	a.Logger.Info("admin credentials written", "path", a.Path, "user", User)
	return nil
}
