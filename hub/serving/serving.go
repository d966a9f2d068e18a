package serving

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
)

// Lifetimes and timing of the serving certificate.
const (
	// DefaultLifetime is how long a serving certificate is valid unless
	// configured: 30 days, re-issued after about 20 while the hub runs.
	DefaultLifetime = 30 * 24 * time.Hour
	// MinLifetime is the shortest lifetime a hub accepts: the replacement
	// at about two thirds of it leaves 20 s for clients whose clocks run
	// ahead and for retries.
	MinLifetime = time.Minute
	// renewAtMin and renewAtMax bound the fraction of a certificate's
	// lifetime after which it is replaced, drawn uniformly: about two
	// thirds, spread so that the replicas of one hub do not rotate at once.
	renewAtMin = 0.60
	renewAtMax = 0.70
	// RecheckInterval is the longest Run sleeps before it compares the
	// wall clock with the replacement time again (timers stop while a
	// machine is suspended): one minute.
	RecheckInterval = time.Minute
	// RetryInterval is how long Run waits after a failed issue before the
	// next attempt: ten seconds.
	RetryInterval = 10 * time.Second
	// minWait is the shortest Run sleeps between two issues, so that a
	// certificate capped by an expiring CA cannot make it spin: one second.
	minWait = time.Second
)

// Config says what certificate to serve.
type Config struct {
	// Hosts are the DNS names and IP addresses it is valid for.
	Hosts []string
	// Lifetime of each certificate; zero means DefaultLifetime.
	Lifetime time.Duration
	// RenewAfter returns how long after it was issued a certificate valid
	// for life is replaced; nil draws between 60% and 70% of life. Tests
	// set it to rotate within seconds.
	RenewAfter func(life time.Duration) time.Duration
}

// Cert is the current serving certificate and what replaces it.
type Cert struct {
	ca     *pki.CA
	cfg    Config
	logger hclog.Logger
	// mu serializes issuing, so that concurrent handshakes finding the
	// certificate due replace it once.
	mu      sync.Mutex
	current atomic.Pointer[current]
}

// current is one issued certificate and when to replace it.
type current struct {
	cert *tls.Certificate // leaf, then the CA; Leaf set
	// renewAt is wall-clock time (no monotonic reading): compared with
	// time.Now() it is right after a suspend or a clock change.
	renewAt time.Time
}

// New issues the first certificate.
func New(ca *pki.CA, cfg Config, logger hclog.Logger) (*Cert, error) {
	if len(cfg.Hosts) == 0 {
		return nil, errors.New("serving certificate: no host names")
	}
	if cfg.Lifetime == 0 {
		cfg.Lifetime = DefaultLifetime
	}
	if cfg.Lifetime < 0 {
		return nil, fmt.Errorf("serving certificate lifetime %s: must be positive", cfg.Lifetime)
	}
	if cfg.RenewAfter == nil {
		cfg.RenewAfter = func(life time.Duration) time.Duration { return renewAfter(life, rand.Float64()) }
	}
	c := &Cert{ca: ca, cfg: cfg, logger: logger}
	cur, err := c.issue(time.Now())
	if err != nil {
		return nil, err
	}
	c.current.Store(cur)
	return c, nil
}

// renewAfter is the fraction of life drawn from [renewAtMin, renewAtMax)
// by r in [0, 1).
func renewAfter(life time.Duration, r float64) time.Duration {
	if r < 0 || r >= 1 {
		r = 0
	}
	return time.Duration((renewAtMin + r*(renewAtMax-renewAtMin)) * float64(life))
}

// GetCertificate is tls.Config.GetCertificate: the current certificate,
// replaced first if it is due. If replacing it fails, the old one is
// served while it is valid; an expired one never is.
func (c *Cert) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	now := time.Now()
	cur, err := c.renewIfDue(now)
	if err == nil {
		return cur.cert, nil
	}
	c.logger.Error("serving certificate due and not replaced", "error", err)
	if cur := c.current.Load(); now.Before(cur.cert.Leaf.NotAfter) {
		return cur.cert, nil
	}
	return nil, fmt.Errorf("serving certificate expired and not replaced: %w", err)
}

// Leaf is the certificate new handshakes get.
func (c *Cert) Leaf() *x509.Certificate { return c.current.Load().cert.Leaf }

// Run replaces the certificate whenever it is due, until ctx ends.
func (c *Cert) Run(ctx context.Context) error {
	for {
		wait := RetryInterval
		if _, err := c.renewIfDue(time.Now()); err != nil {
			c.logger.Error("serving certificate due and not replaced; retrying", "error", err, "retry_in", RetryInterval)
		} else {
			wait = c.untilDue(time.Now())
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
	}
}

// untilDue is how long Run sleeps: until the replacement time, within
// [minWait, RecheckInterval].
func (c *Cert) untilDue(now time.Time) time.Duration {
	return min(max(c.current.Load().renewAt.Sub(now), minWait), RecheckInterval)
}

// renewIfDue returns the current certificate, replacing it first if its
// time has come.
func (c *Cert) renewIfDue(now time.Time) (*current, error) {
	if cur := c.current.Load(); now.Before(cur.renewAt) {
		return cur, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.current.Load(); now.Before(cur.renewAt) {
		return cur, nil // another handshake replaced it meanwhile
	}
	cur, err := c.issue(now)
	if err != nil {
		return nil, err
	}
	c.current.Store(cur)
	return cur, nil
}

// issue signs a certificate for a new key.
func (c *Cert) issue(now time.Time) (*current, error) {
	if !now.Before(c.ca.Cert.NotAfter) {
		return nil, fmt.Errorf("issue serving certificate: the hub CA expired at %s", c.ca.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
	issued, err := c.ca.IssueServing(c.cfg.Hosts, c.cfg.Lifetime)
	if err != nil {
		return nil, fmt.Errorf("issue serving certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(issued.CertPEM, issued.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("issue serving certificate: %w", err)
	}
	pair.Certificate = append(pair.Certificate, c.ca.Cert.Raw)
	pair.Leaf = issued.Cert
	life := issued.Cert.NotAfter.Sub(now)
	cur := &current{cert: &pair, renewAt: now.Add(c.cfg.RenewAfter(life)).Round(0)}
	logger := c.logger.With("serial", issued.Cert.SerialNumber.Text(16), "not_after", issued.Cert.NotAfter.UTC(), "renew_at", cur.renewAt.UTC())
	if life < c.cfg.Lifetime-time.Minute {
		logger.Warn("serving certificate issued, shortened to the hub CA's expiry: renew the CA", "ca_not_after", c.ca.Cert.NotAfter.UTC())
	} else {
		logger.Info("serving certificate issued")
	}
	return cur, nil
}
