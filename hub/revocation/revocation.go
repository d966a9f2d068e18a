package revocation

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// ErrRevoked: a certificate of a revoked user, issued before the
// revocation.
var ErrRevoked = errors.New("revocation: certificate revoked")

// Revoked is one stored revocation.
type Revoked struct {
	// Name is the user name (the certificates' common name).
	Name string `json:"name"`
	// At is when it was revoked: certificates issued up to then are
	// refused.
	At time.Time `json:"revokedAt"`
	// By is the admin who revoked it.
	By string `json:"revokedBy,omitempty"`
}

// Prefix is the view prefix the List follows: the hub's view holds it.
func Prefix() view.Prefix {
	return view.Prefix{Prefix: store.RevokedUsersPrefix, Decode: decode}
}

// decode decodes a stored revocation for the view; one whose name is not
// its key's does not decode.
func decode(key string, value []byte) (any, error) {
	name := strings.TrimPrefix(key, store.RevokedUsersPrefix)
	var r Revoked
	if err := json.Unmarshal(value, &r); err != nil {
		return nil, fmt.Errorf("decode revocation %s: %w", key, err)
	}
	if r.Name != name {
		return nil, fmt.Errorf("decode revocation %s: names %q", key, r.Name)
	}
	return r, nil
}

// unreadable is what an unreadable revocation of name holds: every
// certificate of the name issued up to now is refused (failing closed).
func unreadable(name string, _ error) Revoked {
	return Revoked{Name: name, At: time.Now()}
}

// List follows the revoked users of one store, in the replica's view. Its
// methods are safe for concurrent use.
type List struct {
	st      *store.Store
	log     hclog.Logger
	records *view.Records[Revoked]
}

// New returns the list of st's revocations, followed in v (which holds
// Prefix); Run loads and follows it.
func New(st *store.Store, v *view.View, logger hclog.Logger) *List {
	log := logger.Named("revocation")
	return &List{st: st, log: log, records: view.NewRecords(v, store.RevokedUsersPrefix, unreadable, log)}
}

// Run follows the revocations in the view until ctx ends, then returns
// nil.
func (l *List) Run(ctx context.Context) error { return l.records.Run(ctx) }

// Changed returns a channel closed at the next change of the revocations.
func (l *List) Changed() <-chan struct{} { return l.records.Changed() }

// Revoke stores the revocation of every certificate of user name issued
// until now; by names the admin. It is durable once Revoke returns, and
// this replica refuses the certificates at once; the others as soon as
// their watch delivers it.
func (l *List) Revoke(ctx context.Context, name, by string) (Revoked, error) {
	r := Revoked{Name: name, At: time.Now().UTC(), By: by}
	data, err := json.Marshal(r)
	if err != nil {
		return Revoked{}, err
	}
	if _, err := l.st.Put(ctx, store.RevokedUserKey(name), data); err != nil {
		return Revoked{}, fmt.Errorf("store revocation of user %s: %w", name, err)
	}
	l.records.Set(name, r)
	l.log.Info("user revoked", "user", name, "by", by, "revoked_at", r.At)
	return r, nil
}

// All returns every revocation in the store, by name.
func (l *List) All(ctx context.Context) ([]Revoked, error) {
	kvs, _, err := l.st.List(ctx, store.RevokedUsersPrefix)
	if err != nil {
		return nil, fmt.Errorf("list revocations: %w", err)
	}
	out := make([]Revoked, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, l.decodeKV(kv))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Check returns an error wrapping ErrRevoked when cert is a user's
// certificate issued up to that user's revocation; nil for anything else
// (agents, certificates that are no Tether identity: the services'
// authorization refuses those).
func (l *List) Check(ctx context.Context, cert *x509.Certificate) error {
	id, err := pki.IdentityOf(cert)
	if err != nil || !id.Kind.IsUser() {
		return nil
	}
	r, ok, err := l.lookup(ctx, id.Name)
	if err != nil {
		return fmt.Errorf("check revocation of user %s: %w", id.Name, err)
	}
	if !ok || pki.IssuedAt(cert).After(r.At) {
		return nil
	}
	by := ""
	if r.By != "" {
		by = " by " + r.By
	}
	return fmt.Errorf("%w: user %q was revoked at %s%s, and this certificate (serial %s) was issued before; ask an admin for a new one (tetherctl user create)",
		ErrRevoked, id.Name, r.At.UTC().Format(time.RFC3339), by, cert.SerialNumber.Text(16))
}

// lookup returns name's revocation from memory, or from the store until
// Run has listed once.
func (l *List) lookup(ctx context.Context, name string) (Revoked, bool, error) {
	if r, ok, loaded := l.records.Get(name); loaded {
		return r, ok, nil
	}
	kv, err := l.st.Get(ctx, store.RevokedUserKey(name))
	if errors.Is(err, store.ErrNotFound) {
		return Revoked{}, false, nil
	}
	if err != nil {
		return Revoked{}, false, err
	}
	return l.decodeKV(kv), true, nil
}

// decodeKV reads a revocation read from the store, failing closed as the
// view's do.
func (l *List) decodeKV(kv store.KV) Revoked {
	v, err := decode(kv.Key, kv.Value)
	if err != nil {
		l.log.Warn("revocation record unreadable; every certificate of the user issued until now is refused", "key", kv.Key, "error", err)
		return unreadable(strings.TrimPrefix(kv.Key, store.RevokedUsersPrefix), err)
	}
	return v.(Revoked)
}
