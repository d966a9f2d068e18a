package detector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
)

// LabelAutoCreated marks a Namespace template the detector created on the
// hub because templates were applied in a namespace the hub had no
// Namespace for.
const LabelAutoCreated = "namespace.tether.io/auto-created"

// WithNamespacePropagation turns namespace auto-propagation on (the
// default, as Karmada's namespace controller) or off (Karmada's
// --controllers=-namespace): off, a Namespace is propagated only by a
// ClusterPropagationPolicy and no Namespace is created on the hub.
func WithNamespacePropagation(on bool) Option { return func(d *Detector) { d.namespaces = on } }

// namespaceRef is where the Namespace ns is stored.
func namespaceRef(ns string) store.ObjectRef {
	return store.ObjectRef{Kind: "Namespace", Name: ns}
}

// ensureNamespace creates, on the hub, the Namespace of template t when
// the hub has none and the namespace is auto-propagated: a Kubernetes API
// server would have required it, and its members need it before t lands
// there. It never deletes or changes one: a Namespace the user applied,
// opted out or deleted while templates remain is theirs (deleted, it is
// created again as long as templates are in it).
func (d *Detector) ensureNamespace(ctx context.Context, t *bind.Template) error {
	ns := t.Ref.Namespace
	if !d.namespaces || !d.filter.PropagatesNamespace(ns) {
		return nil
	}
	ref := namespaceRef(ns)
	if d.idx.templates[ref] != nil || d.idx.broken.templates[ref] != "" {
		return nil
	}
	data, err := namespaceObject(ns, time.Now())
	if err != nil {
		return err
	}
	rev, err := d.store.Create(ctx, store.ObjectKey(ref), data)
	if errors.Is(err, store.ErrExists) {
		return nil // the watch brings it
	}
	if err != nil {
		return fmt.Errorf("create namespace %s on the hub: %w", ns, err)
	}
	created, err := decodeTemplate(ref, store.KV{Value: data, Revision: rev, CreateRevision: rev})
	if err != nil {
		return err
	}
	d.idx.templates[ref] = created
	d.mark(ref, bind.Cause{})
	d.log.Info("namespace created on the hub for the templates in it", "namespace", ns, "template", refString(t.Ref))
	return nil
}

// namespaceObject is the stored form of a Namespace the detector creates,
// with the metadata the hub's API gives an applied object.
func namespaceObject(ns string, now time.Time) ([]byte, error) {
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{
			"name":              ns,
			"labels":            map[string]any{LabelAutoCreated: "true"},
			"uid":               string(uuid.NewUUID()),
			"creationTimestamp": now.UTC().Format(time.RFC3339),
			"generation":        1,
		},
	}
	return json.Marshal(obj)
}
