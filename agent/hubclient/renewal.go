package hubclient

import (
	"github.com/tetherproj/tether/internal/backoff"
	"math/rand/v2"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Certificate renewal (DESIGN §8): the client asks the hub over the stream
// for a certificate for a new key once renewAtMin–renewAtMax of its
// certificate's lifetime has passed, drawn uniformly so that the agents
// registered at once do not all ask at once.
const (
	// renewAtMin and renewAtMax bound the fraction of the certificate's
	// lifetime after which it is renewed: about 75%, leaving a quarter of
	// it for retries.
	renewAtMin = 0.70
	renewAtMax = 0.80
	// renewRetryMin is the shortest wait between two requests: the hub
	// serves one renewal per stream every 2 s (hub/agentapi).
	renewRetryMin = 2 * time.Second
	// renewAnswerTimeout is how long the client waits for the answer to a
	// request before it asks again.
	renewAnswerTimeout = 30 * time.Second
)

// renewRetry is the backoff of a refused renewal, 5 s up to 10 min with
// equal jitter; renewRetryAt also caps it at half the time left before
// the certificate expires, so that retries go on until then.
var renewRetry = backoff.Policy{Base: 5 * time.Second, Max: 10 * time.Minute, Jitter: true}

// renewAt returns when to renew a certificate that the agent got at
// issued and that expires at notAfter: after the fraction of that lifetime
// drawn from [renewAtMin, renewAtMax) by r in [0, 1).
func renewAt(issued, notAfter time.Time, r float64) time.Time {
	if r < 0 || r >= 1 {
		r = 0
	}
	frac := renewAtMin + r*(renewAtMax-renewAtMin)
	return issued.Add(time.Duration(frac * float64(notAfter.Sub(issued))))
}

// renewRetryAt returns when to ask again at now after refusal number
// attempt (0 for the first) of the renewal of a certificate expiring at
// notAfter: the backoff, but no later than halfway to notAfter (and no
// sooner than renewRetryMin), so that a refusal is retried before the
// certificate expires. An expired certificate gets the plain backoff: the
// hub refuses it until an admin registers the cluster again.
func renewRetryAt(now, notAfter time.Time, attempt int, r float64) time.Time {
	d := renewRetry.DelayWith(attempt, r)
	if half := notAfter.Sub(now) / 2; half > 0 && d > half {
		d = max(half, renewRetryMin)
	}
	return now.Add(d)
}

// renewal is the client's renewal state, across streams. Only the stream
// goroutine (connectLoop) uses it.
type renewal struct {
	due      time.Time // when to ask next; zero: not scheduled yet
	notAfter time.Time // of the certificate in use
	refusals int       // since the last renewal
	asked    bool      // a request is out on the current stream
	redial   bool      // a certificate was installed since the connection was dialed
}

// schedule sets the next renewal from the certificate in use.
func (c *Client) schedule() {
	cert, issued, err := c.cfg.Credentials.Certificate()
	if err != nil {
		c.log.Error("client certificate not read; renewal retried later", "error", err)
		c.renewal.due = c.cfg.Now().Add(renewRetry.Max)
		return
	}
	c.renewal.notAfter = cert.NotAfter
	c.renewal.due = renewAt(issued, cert.NotAfter, rand.Float64())
	c.log.Info("certificate renewal scheduled", "serial", cert.SerialNumber.String(),
		"not_after", cert.NotAfter, "renew_at", c.renewal.due.Round(0))
}

// armRenewal sets the stream's renewal timer to the due time, scheduling
// it first if needed; it does nothing when the client does not renew.
func (s *conn) armRenewal() {
	c := s.c
	if c.cfg.Credentials == nil {
		return
	}
	if c.renewal.due.IsZero() {
		c.schedule()
	}
	wait := max(c.renewal.due.Sub(c.cfg.Now()), 0)
	if s.renewTimer == nil {
		s.renewTimer = time.NewTimer(wait)
	} else {
		s.renewTimer.Reset(wait)
	}
}

// askRenewal sends a request for a certificate for a new key, or schedules
// a retry when none can be made.
func (s *conn) askRenewal() error {
	c := s.c
	csr, err := c.cfg.Credentials.Request()
	if err != nil {
		s.refused("certificate request not made", err.Error())
		return nil
	}
	if err := s.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_CertificateRenewal{
		CertificateRenewal: &agentv1.CertificateRenewal{CsrPem: csr}}}); err != nil {
		return err
	}
	c.log.Info("certificate renewal asked for", "not_after", c.renewal.notAfter)
	c.renewal.asked = true
	c.renewal.due = c.cfg.Now().Add(renewAnswerTimeout)
	s.armRenewal()
	return nil
}

// renewed installs the certificate the hub sent, or schedules a retry.
func (s *conn) renewed(m *agentv1.CertificateRenewed) {
	c := s.c
	if !c.renewal.asked {
		c.log.Warn("certificate renewal answer ignored: none was asked for on this stream")
		return
	}
	c.renewal.asked = false
	if msg := m.GetErrorMessage(); msg != "" || len(m.GetCertificatePem()) == 0 {
		s.refused("certificate renewal refused by the hub", msg)
		return
	}
	if err := c.cfg.Credentials.Renewed(m.GetCertificatePem()); err != nil {
		s.refused("renewed certificate not installed", err.Error())
		return
	}
	c.renewal.refusals, c.renewal.redial = 0, true
	c.log.Info("certificate renewed; the next connection uses it", "not_after", m.GetNotAfter().AsTime())
	c.schedule()
	s.armRenewal()
}

// refused logs why a renewal did not happen and schedules the retry.
func (s *conn) refused(what, why string) {
	c := s.c
	c.renewal.asked = false
	c.renewal.due = renewRetryAt(c.cfg.Now(), c.renewal.notAfter, c.renewal.refusals, rand.Float64())
	c.renewal.refusals++
	c.log.Warn(what+"; retrying", "reason", why, "retry_at", c.renewal.due.Round(0), "not_after", c.renewal.notAfter)
	s.armRenewal()
}
