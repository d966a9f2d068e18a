package clientapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/hub/store"
)

// Get returns one object; a template comes with its aggregated status.
func (o *Objects) Get(ctx context.Context, req *hubv1.GetRequest) (*hubv1.GetResponse, error) {
	c, err := o.b.authorize(ctx)
	if err != nil {
		return nil, grpcStatus(err)
	}
	obj, err := o.b.get(ctx, req.GetRef(), c)
	if err != nil {
		return nil, grpcStatus(err)
	}
	return &hubv1.GetResponse{Object: obj}, nil
}

func (b *backend) get(ctx context.Context, ref *hubv1.ObjectRef, c caller) (*hubv1.Object, error) {
	key, kr, err := resolveRef(ref)
	if err != nil {
		return nil, err
	}
	if err := c.may(roles.Read, key.Kind, key.Namespace); err != nil {
		return nil, err
	}
	v := c.view()
	if isBindingKind(kr) {
		return b.getBinding(ctx, key, ref)
	}
	// The object with what its status is made of, in one read.
	objKey, bindingKey, rolloutKey := store.ObjectKey(key), store.BindingKey(key), store.RolloutKey(work.KeyOfRef(key))
	keys := []string{objKey}
	if !kr.own {
		keys = append(keys, bindingKey, rolloutKey)
	}
	kvs, err := b.st.GetAll(ctx, keys)
	if err != nil {
		return nil, err
	}
	kv, ok := kvs[objKey]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, describe(ref))
	}
	st := statusOf{binding: kvs[bindingKey].Value, rollout: kvs[rolloutKey].Value}
	return b.objectOf(ctx, key, kv, st, v)
}

// statusOf is what a template's .status is made of on read: its binding
// (the aggregated status) and its rollout record, if any.
type statusOf struct {
	binding, rollout []byte
}

// objectOf renders a stored value for clients: resourceVersion set, for
// a template with a binding the aggregated status merged in and with a
// rollout its condition (withRollout), for a FederatedResourceQuota its
// status (withQuotaStatus), and what v hides hidden.
func (b *backend) objectOf(ctx context.Context, key store.ObjectRef, kv store.KV, st statusOf, v view) (*hubv1.Object, error) {
	kv, err := b.withQuotaStatus(ctx, key, kv)
	if err != nil {
		return nil, err
	}
	obj, err := withRevision(kv.Value, kv.Revision)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kv.Key, err)
	}
	v.redact(key, obj)
	if st.binding != nil {
		obj = b.withStatus(obj, st.binding)
	}
	if st.rollout != nil {
		obj = b.withRollout(obj, st.rollout)
	}
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	apiVersion, _ := obj["apiVersion"].(string)
	return &hubv1.Object{
		Ref:        &hubv1.ObjectRef{ApiVersion: apiVersion, Kind: key.Kind, Namespace: key.Namespace, Name: key.Name},
		Revision:   kv.Revision,
		ObjectJson: js,
	}, nil
}

// resolveRef is the store key of a request's object.
func resolveRef(ref *hubv1.ObjectRef) (store.ObjectRef, kindRef, error) {
	kr, err := resolveKind(ref.GetApiVersion(), ref.GetKind())
	if err != nil {
		return store.ObjectRef{}, kr, err
	}
	if ref.GetName() == "" {
		return store.ObjectRef{}, kr, fmt.Errorf("%w: name is required", ErrInvalid)
	}
	ns := ref.GetNamespace()
	if kr.scope == scopeCluster {
		ns = ""
	}
	return store.ObjectRef{Group: kr.group, Kind: kr.kind, Namespace: ns, Name: ref.GetName()}, kr, nil
}

// List returns one page of the objects of a kind.
func (o *Objects) List(ctx context.Context, req *hubv1.ListRequest) (*hubv1.ListResponse, error) {
	c, err := o.b.authorize(ctx)
	if err != nil {
		return nil, grpcStatus(err)
	}
	resp, err := o.b.list(ctx, req, c)
	return resp, grpcStatus(err)
}

// list reads the kind's objects at one revision and returns those after the
// page token's key. Each page is a fresh read: a later page may see changes
// made after the first (the store reads at its newest revision). A
// request for a namespace or a cluster-scoped kind the caller may not read
// is refused; one for every namespace returns those the caller may read.
func (b *backend) list(ctx context.Context, req *hubv1.ListRequest, c caller) (*hubv1.ListResponse, error) {
	kr, err := resolveKind(req.GetApiVersion(), req.GetKind())
	if err != nil {
		return nil, err
	}
	sel, err := labels.Parse(req.GetLabelSelector())
	if err != nil {
		return nil, fmt.Errorf("%w: label selector %q: %v", ErrInvalid, req.GetLabelSelector(), err)
	}
	after, err := decodePageToken(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	size, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	ns := req.GetNamespace()
	if kr.scope == scopeCluster {
		ns = ""
	}
	if ns != "" || kr.scope == scopeCluster {
		if err := c.may(roles.Read, kr.kind, ns); err != nil {
			return nil, err
		}
	}
	kvs, rev, err := b.st.List(ctx, store.KindPrefix(store.ObjectsPrefix, kr.group, kr.kind, ns))
	if err != nil {
		return nil, err
	}
	bindings, err := b.recordsOf(ctx, kr, ns, store.BindingsPrefix)
	if err != nil {
		return nil, err
	}
	rollouts, err := b.recordsOf(ctx, kr, ns, store.RolloutsPrefix)
	if err != nil {
		return nil, err
	}
	resp := &hubv1.ListResponse{Revision: rev}
	for _, kv := range kvs {
		if kv.Key <= after {
			continue
		}
		key, ok := store.ParseObjectKey(kv.Key)
		if !ok || !matches(kv.Value, sel) || !c.reads(key.Kind, key.Namespace) {
			continue
		}
		if len(resp.Objects) == size {
			resp.NextPageToken = encodePageToken(resp.Objects[size-1], kr)
			break
		}
		st := statusOf{binding: bindings[store.BindingKey(key)], rollout: rollouts[store.RolloutKey(work.KeyOfRef(key))]}
		obj, err := b.objectOf(ctx, key, kv, st, c.view())
		if err != nil {
			return nil, err
		}
		resp.Objects = append(resp.Objects, obj)
	}
	return resp, nil
}

// recordsOf returns what is stored under prefix (BindingsPrefix: the
// bindings, RolloutsPrefix: the rollout records) for the templates of a
// kind, by key; none for Tether's own kinds.
func (b *backend) recordsOf(ctx context.Context, kr kindRef, ns, prefix string) (map[string][]byte, error) {
	if kr.own {
		return nil, nil
	}
	kvs, _, err := b.st.List(ctx, store.KindPrefix(prefix, kr.group, kr.kind, ns))
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = kv.Value
	}
	return out, nil
}

// pageSize is the page size a request asks for: 0 for the default, at
// most maxListPageSize.
func pageSize(n int32) (int, error) {
	switch {
	case n == 0:
		return DefaultListPageSize, nil
	case n < 0 || n > maxListPageSize:
		return 0, fmt.Errorf("%w: page_size %d: the hub serves pages of 1 to %d objects (0 for %d)", ErrInvalid, n, maxListPageSize, DefaultListPageSize)
	}
	return int(n), nil
}

// The page token is the store key of the last object of the page.
func encodePageToken(last *hubv1.Object, kr kindRef) string {
	r := last.GetRef()
	key := store.ObjectKey(store.ObjectRef{Group: kr.group, Kind: kr.kind, Namespace: r.GetNamespace(), Name: r.GetName()})
	return base64.RawURLEncoding.EncodeToString([]byte(key))
}

func decodePageToken(tok string) (string, error) {
	if tok == "" {
		return "", nil
	}
	key, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || !strings.HasPrefix(string(key), store.ObjectsPrefix) {
		return "", fmt.Errorf("%w: page_token is not one a List returned", ErrInvalid)
	}
	return string(key), nil
}

// matches reports whether a stored object's labels match sel.
func matches(value []byte, sel labels.Selector) bool {
	if sel.Empty() {
		return true
	}
	var obj struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(value, &obj); err != nil {
		return false
	}
	return sel.Matches(labels.Set(obj.Metadata.Labels))
}

// Delete removes one object.
func (o *Objects) Delete(ctx context.Context, req *hubv1.DeleteRequest) (*hubv1.DeleteResponse, error) {
	c, err := o.b.authorize(ctx)
	if err != nil {
		return nil, grpcStatus(err)
	}
	resp, err := o.b.delete(ctx, req, c)
	return resp, grpcStatus(err)
}

func (b *backend) delete(ctx context.Context, req *hubv1.DeleteRequest, c caller) (*hubv1.DeleteResponse, error) {
	key, _, err := resolveRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	if err := c.may(roles.Write, key.Kind, key.Namespace); err != nil {
		return nil, err
	}
	kv, err := b.st.Get(ctx, store.ObjectKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, describe(req.GetRef()))
	}
	if err != nil {
		return nil, err
	}
	if want := req.GetExpectedRevision(); want > 0 && want != kv.Revision {
		return nil, fmt.Errorf("%w: %s is at revision %d, not %d", ErrRevisionMismatch, describe(req.GetRef()), kv.Revision, want)
	}
	obj, err := b.objectOf(ctx, key, kv, statusOf{}, c.view())
	if err != nil {
		return nil, err
	}
	resp := &hubv1.DeleteResponse{Object: obj}
	if req.GetDryRun() {
		return resp, nil
	}
	if resp.Revision, err = b.st.Delete(ctx, store.ObjectKey(key), kv.Revision); err != nil {
		if errors.Is(err, store.ErrConflict) && req.GetExpectedRevision() > 0 {
			return nil, fmt.Errorf("%w: %s changed: %v", ErrRevisionMismatch, describe(req.GetRef()), err)
		}
		return nil, err
	}
	return resp, nil
}
