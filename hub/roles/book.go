package roles

import (
	"context"
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

// Record is one user's stored grant.
type Record struct {
	// Name is the user name (the certificates' common name).
	Name string `json:"name"`
	Grant
	// At is when it was last set, By the admin who set it.
	At time.Time `json:"setAt"`
	By string    `json:"setBy,omitempty"`
}

// Prefix is the view prefix the Book follows: the hub's view holds it.
func Prefix() view.Prefix {
	return view.Prefix{Prefix: store.UserRolesPrefix, Decode: decode}
}

// decode decodes a stored record for the view; one whose name is not its
// key's, or whose grant is not valid, does not decode.
func decode(key string, value []byte) (any, error) {
	name := strings.TrimPrefix(key, store.UserRolesPrefix)
	var r Record
	if err := json.Unmarshal(value, &r); err != nil {
		return nil, fmt.Errorf("decode user role %s: %w", key, err)
	}
	if r.Name != name {
		return nil, fmt.Errorf("decode user role %s: names %q", key, r.Name)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("decode user role %s: %w", key, err)
	}
	return r, nil
}

// unreadable is what an unreadable record of name holds: it grants
// nothing (failing closed), and it still overrides the role in the user's
// certificate.
func unreadable(name string, _ error) Record { return Record{Name: name} }

// Book follows the users' stored grants of one store, in the replica's
// view. Its methods are safe for concurrent use.
type Book struct {
	st      *store.Store
	log     hclog.Logger
	records *view.Records[Record]
}

// New returns the book of st's grants, followed in v (which holds
// Prefix); Run loads and follows it.
func New(st *store.Store, v *view.View, logger hclog.Logger) *Book {
	log := logger.Named("roles")
	return &Book{st: st, log: log, records: view.NewRecords(v, store.UserRolesPrefix, unreadable, log)}
}

// Run follows the grants in the view until ctx ends, then returns nil.
func (b *Book) Run(ctx context.Context) error { return b.records.Run(ctx) }

// Changed returns a channel closed at the next change of the grants.
func (b *Book) Changed() <-chan struct{} { return b.records.Changed() }

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
	b.records.Set(name, r)
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
		out = append(out, b.decodeKV(kv))
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
	if r, ok, loaded := b.records.Get(name); loaded {
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
	return b.decodeKV(kv), true, nil
}

// decodeKV reads a record read from the store, failing closed as the
// view's do.
func (b *Book) decodeKV(kv store.KV) Record {
	v, err := decode(kv.Key, kv.Value)
	if err != nil {
		b.log.Warn("user role record unreadable; the user may do nothing until an admin sets its role again", "key", kv.Key, "error", err)
		return unreadable(strings.TrimPrefix(kv.Key, store.UserRolesPrefix), err)
	}
	return v.(Record)
}
