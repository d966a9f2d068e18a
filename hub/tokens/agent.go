package tokens

import (
	"crypto/x509"
	"fmt"
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

// authorize decides whether cert may speak for rec's cluster. Without a
// binding (nil, or no key yet) any certificate of the hub's CA may: agents
// minted by `tether-hub mint-agent` have no registered key.
func authorize(rec *Agent, cert *x509.Certificate) error {
	switch {
	case rec == nil:
		return nil
	case rec.Removed != nil:
		return fmt.Errorf("%w: cluster %q was removed at %s; register it again with a new token", ErrRevoked, rec.Cluster, rec.Removed.UTC().Format(time.RFC3339))
	case rec.KeyFingerprint == "":
		return nil
	case Fingerprint(cert.RawSubjectPublicKeyInfo) != rec.KeyFingerprint:
		return fmt.Errorf("%w: the certificate's key %s is not the key %s registered for cluster %q (replaced or rotated)",
			ErrRevoked, Fingerprint(cert.RawSubjectPublicKeyInfo), rec.KeyFingerprint, rec.Cluster)
	}
	return nil
}

// approve returns rec with its pending key bound, or ErrNoPending when fp
// (empty: whatever is pending) is not the pending key.
func approve(rec Agent, fp string) (Agent, error) {
	switch {
	case rec.PendingKeyFingerprint == "":
		return rec, fmt.Errorf("%w: cluster %q has no key awaiting approval", ErrNoPending, rec.Cluster)
	case fp != "" && fp != rec.PendingKeyFingerprint:
		return rec, fmt.Errorf("%w: the key awaiting approval for cluster %q is %s, not %s", ErrNoPending, rec.Cluster, rec.PendingKeyFingerprint, fp)
	}
	rec.KeyFingerprint, rec.PendingKeyFingerprint, rec.Removed = rec.PendingKeyFingerprint, "", nil
	return rec, nil
}
