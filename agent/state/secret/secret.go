// Package secret keeps the agent's state (package state: the works held,
// the hub identity, the status digests) in one Kubernetes Secret of the
// member cluster, for agents without a persistent volume (--state-secret).
// Credentials and keys stay in --data-dir; only the state is here.
//
// Each state blob is one data key of the Secret, its name with "/" made
// "_" (works/<sha256>.json is works_<sha256>.json). A write reads the
// Secret (or uses the copy of its last write), sets the one key and
// updates it with that resourceVersion, again on a conflict, so a write
// never undoes another's; the Secret is created by the first write. A
// Secret holds at most 1 MiB: a write that would exceed it is ErrTooLarge
// and changes nothing.
//
//	b := secret.New(kubeClient.Secrets("tether-system"), "tether-system", "tether-agent-state")
//	store := state.New(b)
//	snap, err := store.Load(ctx)
package secret

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// MaxSize is the most a Secret's data may hold, in bytes: the API
// server's limit (the sum of the values' sizes, 1 MiB).
const MaxSize = 1 << 20

// ErrTooLarge is returned by a write that would make the Secret larger
// than MaxSize.
var ErrTooLarge = errors.New("secret: state too large for a Secret")

// managedBy labels the Secret as the agent's.
var managedBy = map[string]string{"app.kubernetes.io/managed-by": "tether-agent"}

// Secrets is what the backend needs of a client of the Secrets of its
// namespace: agent/kube's Client.Secrets, or client-go's typed
// SecretInterface.
type Secrets interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
	Create(ctx context.Context, s *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error)
	Update(ctx context.Context, s *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error)
}

// Backend is a state.Backend over one Secret. Its methods are not safe for
// concurrent use (state.Store serializes them).
type Backend struct {
	secrets         Secrets
	namespace, name string
	// last is the Secret as the last read or write left it; nil before
	// the first, or after a conflict. Writes start from it.
	last *corev1.Secret
}

// New returns the backend of the Secret namespace/name, reached by
// secrets, a client of namespace's Secrets. It sends nothing yet.
func New(secrets Secrets, namespace, name string) *Backend {
	return &Backend{secrets: secrets, namespace: namespace, name: name}
}

// key is the data key of a blob name.
func key(name string) string { return strings.ReplaceAll(name, "/", "_") }

// blobName is the blob name of a data key.
func blobName(key string) string { return strings.ReplaceAll(key, "_", "/") }

// Where names the Secret and data key of blob name.
func (b *Backend) Where(name string) string {
	return fmt.Sprintf("secret %s/%s key %s", b.namespace, b.name, key(name))
}

// ReadAll returns the Secret's blobs; a missing Secret is no blob.
func (b *Backend) ReadAll(ctx context.Context) (map[string][]byte, error) {
	s, err := b.get(ctx)
	if err != nil {
		return nil, err
	}
	blobs := make(map[string][]byte, len(s.Data))
	for k, v := range s.Data {
		blobs[blobName(k)] = v
	}
	return blobs, nil
}

// Write sets the blob name to data.
func (b *Backend) Write(ctx context.Context, name string, data []byte) error {
	return b.update(ctx, name, func(d map[string][]byte) bool {
		d[key(name)] = data
		return true
	})
}

// Delete removes the blob name.
func (b *Backend) Delete(ctx context.Context, name string) error {
	return b.update(ctx, name, func(d map[string][]byte) bool {
		if _, ok := d[key(name)]; !ok {
			return false
		}
		delete(d, key(name))
		return true
	})
}

// update applies change to a copy of the Secret's data and writes it,
// retrying on a conflict from the Secret as it then is. change reports
// whether it changed anything; nothing is sent when it did not.
func (b *Backend) update(ctx context.Context, name string, change func(map[string][]byte) bool) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := b.last
		if cur == nil {
			s, err := b.get(ctx)
			if err != nil {
				return err
			}
			cur = s
		}
		next := cur.DeepCopy()
		if next.Data == nil {
			next.Data = map[string][]byte{}
		}
		if !change(next.Data) {
			return nil
		}
		if err := b.checkSize(next.Data); err != nil {
			return err
		}
		return b.put(ctx, next)
	})
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return fmt.Errorf("state: write %s: %w", b.Where(name), err)
	}
	return err
}

// get reads the Secret; a missing one is an empty Secret, not yet created.
func (b *Backend) get(ctx context.Context) (*corev1.Secret, error) {
	s, err := b.secrets.Get(ctx, b.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		b.last = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: b.namespace, Name: b.name}}
		return b.last, nil
	}
	if err != nil {
		b.last = nil
		return nil, fmt.Errorf("state: read secret %s/%s: %w", b.namespace, b.name, err)
	}
	b.last = s
	return s, nil
}

// put creates s when it has no resourceVersion, else updates it. A
// conflict (or a Secret created or deleted meanwhile, made a conflict)
// drops the copy, so the retry reads the Secret again.
func (b *Backend) put(ctx context.Context, s *corev1.Secret) error {
	secrets := b.secrets
	var out *corev1.Secret
	var err error
	if s.ResourceVersion == "" {
		s.Type = corev1.SecretTypeOpaque
		s.Labels = maps.Clone(managedBy)
		out, err = secrets.Create(ctx, s, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = apierrors.NewConflict(corev1.Resource("secrets"), b.name, err)
		}
	} else {
		out, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) { // deleted since: create it again
			err = apierrors.NewConflict(corev1.Resource("secrets"), b.name, err)
		}
	}
	if err != nil {
		b.last = nil
		return err
	}
	b.last = out
	return nil
}

// checkSize returns ErrTooLarge when data exceeds MaxSize.
func (b *Backend) checkSize(data map[string][]byte) error {
	n := 0
	for _, v := range data {
		n += len(v)
	}
	if n <= MaxSize {
		return nil
	}
	return fmt.Errorf("%w: secret %s/%s would hold %d bytes, over Kubernetes' limit of 1 MiB (%d bytes) for a Secret; "+
		"keep the state in --data-dir instead (drop --state-secret and give the agent a persistent volume)",
		ErrTooLarge, b.namespace, b.name, n, MaxSize)
}
