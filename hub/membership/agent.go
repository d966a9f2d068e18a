package membership

import (
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"strings"
	"time"
)

// Agent is the stored binding of a cluster name to its agent's key.
type Agent struct {
	Cluster string `json:"cluster"`
	// KeyFingerprint is the fingerprint of the registered key; empty while
	// the name has no registered key (a pending key for a cluster whose
	// certificate was minted outside registration).
	KeyFingerprint string `json:"keyFingerprint,omitempty"`
	// PendingKeyFingerprint is a refused registration's new key, awaiting
	// Approve.
	PendingKeyFingerprint string `json:"pendingKeyFingerprint,omitempty"`
	// Registered is when the bound key registered; NotAfter when the
	// certificate issued for it expires.
	Registered time.Time `json:"registered,omitzero"`
	NotAfter   time.Time `json:"notAfter,omitzero"`
	// PreviousKeyFingerprint is the key a renewal over the stream replaced
	// (the key of the certificate that asked for it); it stays accepted
	// until PreviousNotAfter, when that certificate expires, so that the
	// stream it authenticated and a reconnect racing the renewal go on.
	PreviousKeyFingerprint string    `json:"previousKeyFingerprint,omitempty"`
	PreviousNotAfter       time.Time `json:"previousNotAfter,omitzero"`
	// Removed is set by Remove: every certificate of the name is refused
	// until a new registration binds a new key.
	Removed *time.Time `json:"removed,omitempty"`
}

// admission is what a registration may do with a name.
type admission int

const (
	// admitBind: the name is free (or removed); bind it to the new key.
	admitBind admission = iota
	// admitSame: the name is bound to this very key; sign again.
	admitSame
	// admitPending: the name is taken by another key; record the new one
	// as pending and refuse.
	admitPending
)

// admit decides a registration of key fp for a name whose binding is rec
// (nil: none) and whose cluster record exists or not. A cluster that exists
// without a binding was minted outside registration: its key is unknown,
// so a new key needs approval like any replacement.
func admit(rec *Agent, clusterExists bool, fp string) admission {
	switch {
	case rec == nil && clusterExists:
		return admitPending
	case rec == nil, rec.Removed != nil:
		return admitBind
	case rec.KeyFingerprint == fp:
		return admitSame
	}
	return admitPending
}

// authorize decides whether cert may speak for rec's cluster at now: its
// key is the bound one, or the one a renewal replaced, until the replaced
// certificate expires. Without a binding (nil, or no key yet) any
// certificate of the hub's CA may: agents minted by `tether-hub mint-agent`
// have no registered key.
func authorize(rec *Agent, cert *x509.Certificate, now time.Time) error {
	fp := Fingerprint(cert.RawSubjectPublicKeyInfo)
	switch {
	case rec == nil:
		return nil
	case rec.Removed != nil:
		return fmt.Errorf("%w: cluster %q was removed at %s; register it again with a new token", ErrRevoked, rec.Cluster, rec.Removed.UTC().Format(time.RFC3339))
	case rec.KeyFingerprint == "", fp == rec.KeyFingerprint:
		return nil
	case fp == rec.PreviousKeyFingerprint && now.Before(rec.PreviousNotAfter):
		return nil // renewed; the old certificate lives out its validity
	case fp == rec.PreviousKeyFingerprint:
		return fmt.Errorf("%w: the certificate's key %s of cluster %q was renewed to %s, and its grace ended at %s",
			ErrRevoked, fp, rec.Cluster, rec.KeyFingerprint, rec.PreviousNotAfter.UTC().Format(time.RFC3339))
	}
	return fmt.Errorf("%w: the certificate's key %s is not the key %s registered for cluster %q (replaced or rotated)",
		ErrRevoked, fp, rec.KeyFingerprint, rec.Cluster)
}

// renew returns the binding of cluster after a renewal at now: cert, which
// asked for it over its stream, must pass authorize; the new key fp becomes
// the bound one, and cert's key stays accepted until cert expires. A key
// bound by an earlier renewal whose answer was lost (neither cert's nor
// fp) is dropped: it was never used. A renewal must bring a new key:
// neither cert's nor the one it replaced.
func renew(rec *Agent, cluster string, cert *x509.Certificate, fp string, notAfter, now time.Time) (Agent, error) {
	if err := authorize(rec, cert, now); err != nil {
		return Agent{}, err
	}
	next := Agent{Cluster: cluster, Registered: now}
	if rec != nil {
		next = *rec
	}
	old := Fingerprint(cert.RawSubjectPublicKeyInfo)
	if fp == old || fp == next.PreviousKeyFingerprint {
		return Agent{}, fmt.Errorf("%w: a renewal of cluster %q must bring a new key; %s was already used", ErrInvalid, cluster, fp)
	}
	next.PreviousKeyFingerprint, next.PreviousNotAfter = old, cert.NotAfter.UTC()
	next.KeyFingerprint, next.NotAfter = fp, notAfter.UTC()
	return next, nil
}

// approve returns rec with its pending key bound, or ErrNoPending when fp
// is not the pending key.
func approve(rec Agent, fp string) (Agent, error) {
	if err := isPending(rec, fp); err != nil {
		return rec, err
	}
	rec.KeyFingerprint, rec.PendingKeyFingerprint, rec.Removed = rec.PendingKeyFingerprint, "", nil
	rec.PreviousKeyFingerprint, rec.PreviousNotAfter = "", time.Time{} // replaced, not renewed: refused at once
	return rec, nil
}

// reject returns rec without its pending key, or ErrNoPending when fp is
// not the pending key.
func reject(rec Agent, fp string) (Agent, error) {
	if err := isPending(rec, fp); err != nil {
		return rec, err
	}
	rec.PendingKeyFingerprint = ""
	return rec, nil
}

// isPending returns ErrNoPending unless fp is rec's pending key.
func isPending(rec Agent, fp string) error {
	switch {
	case rec.PendingKeyFingerprint == "":
		return fmt.Errorf("%w: cluster %q has no key awaiting approval", ErrNoPending, rec.Cluster)
	case fp != rec.PendingKeyFingerprint:
		return fmt.Errorf("%w: the key awaiting approval for cluster %q is %s, not %s", ErrNoPending, rec.Cluster, rec.PendingKeyFingerprint, fp)
	}
	return nil
}

// fingerprintForm is how a key fingerprint reads, for errors.
const fingerprintForm = "sha256:<64 lowercase hex digits>"

// validFingerprint returns ErrInvalid unless fp has the form Fingerprint
// returns.
func validFingerprint(fp string) error {
	hexPart, ok := strings.CutPrefix(fp, "sha256:")
	if ok && len(hexPart) == 2*sha256.Size && strings.Trim(hexPart, "0123456789abcdef") == "" {
		return nil
	}
	if fp == "" {
		return fmt.Errorf("%w: key fingerprint: required: the pending key's, %s, as `tetherctl cluster pending` shows it", ErrInvalid, fingerprintForm)
	}
	return fmt.Errorf("%w: key fingerprint %.80q: want %s, as `tetherctl cluster pending` shows it", ErrInvalid, fp, fingerprintForm)
}
