package revocation

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
)

// relistBackoff is how long Run waits before listing the revocations again
// after a store failure other than a compaction.
const relistBackoff = 2 * time.Second

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

// List follows the revoked users of one store. Its methods are safe for
// concurrent use.
type List struct {
	st  *store.Store
	log hclog.Logger

	mu sync.Mutex // guards the fields below
	// users holds every revocation by name, once loaded is set.
	users  map[string]Revoked
	loaded bool
	// changed is closed, and replaced, whenever users changes.
	changed chan struct{}
}

// New returns the list of st's revocations; Run loads and follows it.
func New(st *store.Store, logger hclog.Logger) *List {
	return &List{st: st, log: logger.Named("revocation"), users: map[string]Revoked{}, changed: make(chan struct{})}
}

// Run lists and watches the revocations until ctx ends, then returns nil;
// it lists again after a compaction or a store failure.
func (l *List) Run(ctx context.Context) error {
	return store.Follow(ctx, l.log, relistBackoff, l.session)
}

func (l *List) session(ctx context.Context) error {
	kvs, rev, err := l.st.List(ctx, store.RevokedUsersPrefix)
	if err != nil {
		return err
	}
	all := make(map[string]Revoked, len(kvs))
	for _, kv := range kvs {
		if r, ok := l.decode(kv); ok {
			all[r.Name] = r
		}
	}
	l.replace(all)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev := range l.st.Watch(wctx, store.RevokedUsersPrefix, rev+1) {
		if ev.Err != nil {
			return ev.Err
		}
		name := strings.TrimPrefix(ev.KV.Key, store.RevokedUsersPrefix)
		r, ok := Revoked{}, false
		if ev.Type == store.EventPut {
			r, ok = l.decode(ev.KV)
		}
		l.set(name, r, ok)
	}
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("watch %s: closed", store.RevokedUsersPrefix)
}

// decode reads a stored revocation. An unreadable one is kept as revoking
// every certificate of its name up to now: failing closed.
func (l *List) decode(kv store.KV) (Revoked, bool) {
	name := strings.TrimPrefix(kv.Key, store.RevokedUsersPrefix)
	var r Revoked
	if err := json.Unmarshal(kv.Value, &r); err != nil || r.Name != name {
		l.log.Warn("revocation record unreadable; every certificate of the user issued until now is refused", "key", kv.Key, "error", err)
		return Revoked{Name: name, At: time.Now()}, true
	}
	return r, true
}

func (l *List) replace(all map[string]Revoked) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.users, l.loaded = all, true
	l.notifyLocked()
}

// set records (ok) or forgets the revocation of name.
func (l *List) set(name string, r Revoked, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ok {
		l.users[name] = r
	} else {
		delete(l.users, name)
	}
	l.notifyLocked()
}

func (l *List) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Changed returns a channel closed at the next change of the revocations.
func (l *List) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

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
	l.set(name, r, true)
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
		if r, ok := l.decode(kv); ok {
			out = append(out, r)
		}
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
	l.mu.Lock()
	r, ok := l.users[name]
	loaded := l.loaded
	l.mu.Unlock()
	if loaded {
		return r, ok, nil
	}
	kv, err := l.st.Get(ctx, store.RevokedUserKey(name))
	if errors.Is(err, store.ErrNotFound) {
		return Revoked{}, false, nil
	}
	if err != nil {
		return Revoked{}, false, err
	}
	r, ok = l.decode(kv)
	return r, ok, nil
}
