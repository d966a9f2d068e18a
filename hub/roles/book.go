package roles

import (
	"context"
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

// relistBackoff is how long Run waits before listing the roles again
// after a store failure other than a compaction.
const relistBackoff = 2 * time.Second

// Record is one user's stored grant.
type Record struct {
	// Name is the user name (the certificates' common name).
	Name string `json:"name"`
	Grant
	// At is when it was last set, By the admin who set it.
	At time.Time `json:"setAt"`
	By string    `json:"setBy,omitempty"`
}

// Book follows the users' stored grants of one store. Its methods are
// safe for concurrent use.
type Book struct {
	st  *store.Store
	log hclog.Logger

	mu sync.Mutex // guards the fields below
	// users holds every record by name, once loaded is set.
	users  map[string]Record
	loaded bool
	// changed is closed, and replaced, whenever users changes.
	changed chan struct{}
}

// New returns the book of st's grants; Run loads and follows it.
func New(st *store.Store, logger hclog.Logger) *Book {
	return &Book{st: st, log: logger.Named("roles"), users: map[string]Record{}, changed: make(chan struct{})}
}

// Run lists and watches the grants until ctx ends, then returns nil; it
// lists again after a compaction or a store failure.
func (b *Book) Run(ctx context.Context) error {
	return store.Follow(ctx, b.log, relistBackoff, b.session)
}

func (b *Book) session(ctx context.Context) error {
	kvs, rev, err := b.st.List(ctx, store.UserRolesPrefix)
	if err != nil {
		return err
	}
	all := make(map[string]Record, len(kvs))
	for _, kv := range kvs {
		r := b.decode(kv)
		all[r.Name] = r
	}
	b.replace(all)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev := range b.st.Watch(wctx, store.UserRolesPrefix, rev+1) {
		if ev.Err != nil {
			return ev.Err
		}
		if ev.Type == store.EventPut {
			b.set(b.decode(ev.KV), true)
		} else {
			b.set(Record{Name: strings.TrimPrefix(ev.KV.Key, store.UserRolesPrefix)}, false)
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("watch %s: closed", store.UserRolesPrefix)
}

// decode reads a stored record. An unreadable one grants nothing: failing
// closed, and it still overrides the role in the user's certificate.
func (b *Book) decode(kv store.KV) Record {
	name := strings.TrimPrefix(kv.Key, store.UserRolesPrefix)
	var r Record
	if err := json.Unmarshal(kv.Value, &r); err != nil || r.Name != name || r.Validate() != nil {
		b.log.Warn("user role record unreadable; the user may do nothing until an admin sets its role again", "key", kv.Key, "error", err)
		return Record{Name: name}
	}
	return r
}

func (b *Book) replace(all map[string]Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.users, b.loaded = all, true
	b.notifyLocked()
}

// set records (ok) or forgets r.Name's record.
func (b *Book) set(r Record, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok {
		b.users[r.Name] = r
	} else {
		delete(b.users, r.Name)
	}
	b.notifyLocked()
}

func (b *Book) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// Changed returns a channel closed at the next change of the grants.
func (b *Book) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

// Set stores name's grant, which replaces the role of every certificate of
// that name; by names the admin. It is durable once Set returns, and this
// replica applies it at once, the others as soon as their watch delivers
// it.
func (b *Book) Set(ctx context.Context, name string, g Grant, by string) (Record, error) {
	if err := g.Validate(); err != nil {
		return Record{}, err
	}
	r := Record{Name: name, Grant: g, At: time.Now().UTC(), By: by}
	data, err := json.Marshal(r)
	if err != nil {
		return Record{}, err
	}
	if _, err := b.st.Put(ctx, store.UserRoleKey(name), data); err != nil {
		return Record{}, fmt.Errorf("store role of user %s: %w", name, err)
	}
	b.set(r, true)
	b.log.Info("user role set", "user", name, "role", g.Role, "namespaces", g.Namespaces, "by", by)
	return r, nil
}

// All returns every stored record, by name.
func (b *Book) All(ctx context.Context) ([]Record, error) {
	kvs, _, err := b.st.List(ctx, store.UserRolesPrefix)
	if err != nil {
		return nil, fmt.Errorf("list user roles: %w", err)
	}
	out := make([]Record, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, b.decode(kv))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// GrantOf returns what the holder of a user certificate id may do: its
// stored grant when there is one, or else the role its certificate
// carries (CertGrant). It answers from what Run last listed and watched;
// until Run has listed once it reads the record from the store.
func (b *Book) GrantOf(ctx context.Context, id pki.Identity) (Grant, error) {
	r, ok, err := b.lookup(ctx, id.Name)
	if err == nil && !ok && id.Kind == pki.KindUser {
		// A user certificate's role is always stored: one this replica
		// does not hold yet was just created through another replica, so
		// ask the store before refusing.
		r, ok, err = b.read(ctx, id.Name)
	}
	if err != nil {
		return Grant{}, fmt.Errorf("role of user %s: %w", id.Name, err)
	}
	if ok {
		return r.Grant, nil
	}
	return CertGrant(id), nil
}

// CertGrant is the grant a certificate's own kind gives when no record is
// stored for its name: fleet-wide admin or viewer for the certificates
// issued before roles were stored (and the admin.conf the hub writes),
// nothing for any other.
func CertGrant(id pki.Identity) Grant {
	switch id.Kind {
	case pki.KindAdmin:
		return Grant{Role: Admin}
	case pki.KindViewer:
		return Grant{Role: Viewer}
	}
	return Grant{}
}

func (b *Book) lookup(ctx context.Context, name string) (Record, bool, error) {
	b.mu.Lock()
	r, ok := b.users[name]
	loaded := b.loaded
	b.mu.Unlock()
	if loaded {
		return r, ok, nil
	}
	return b.read(ctx, name)
}

// read reads name's record from the store.
func (b *Book) read(ctx context.Context, name string) (Record, bool, error) {
	kv, err := b.st.Get(ctx, store.UserRoleKey(name))
	if errors.Is(err, store.ErrNotFound) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	return b.decode(kv), true, nil
}
