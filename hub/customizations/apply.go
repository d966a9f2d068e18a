package customizations

import (
	"context"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// load replaces the target's customizations and webhook configurations with
// those of kvs.
func (w *Watcher) load(kvs []store.KV) {
	var rics []configv1alpha1.ResourceInterpreterCustomization
	seen := map[string]bool{}
	for _, kv := range kvs {
		ref, ok := store.ParseObjectKey(kv.Key)
		if !ok {
			continue
		}
		switch ref.Kind {
		case KindCustomization:
			if c, ok := w.decodeCustomization(ref.Name, kv.Value); ok {
				rics = append(rics, c)
			}
		case KindWebhook:
			seen[ref.Name] = true
			w.applyWebhook(ref.Name, kv.Value)
		}
	}
	w.target.LoadCustomizations(rics)
	for name := range w.webhooks {
		if !seen[name] {
			w.target.RemoveWebhookConfiguration(name)
			delete(w.webhooks, name)
		}
	}
	w.log.Info("loaded", "customizations", len(rics), "webhook_configurations", len(w.webhooks))
}

// apply follows one watched change.
func (w *Watcher) apply(ctx context.Context, ev store.Event) {
	ref, ok := store.ParseObjectKey(ev.KV.Key)
	if !ok {
		return
	}
	switch {
	case ref.Kind == KindCustomization && ev.Type == store.EventDelete:
		w.target.RemoveCustomization(ref.Name)
		w.log.Info("customization removed", "name", ref.Name)
	case ref.Kind == KindCustomization:
		c, ok := w.decodeCustomization(ref.Name, ev.KV.Value)
		if !ok {
			return
		}
		if err := w.target.ApplyCustomization(ctx, &c); err != nil {
			w.log.Warn("customization refused, keeping the previous version", "name", ref.Name, "error", err)
			return
		}
		w.log.Info("customization applied", "name", ref.Name)
	case ref.Kind == KindWebhook && ev.Type == store.EventDelete:
		w.target.RemoveWebhookConfiguration(ref.Name)
		delete(w.webhooks, ref.Name)
		w.log.Info("webhook configuration removed", "name", ref.Name)
	case ref.Kind == KindWebhook:
		w.applyWebhook(ref.Name, ev.KV.Value)
	}
}

func (w *Watcher) decodeCustomization(name string, value []byte) (configv1alpha1.ResourceInterpreterCustomization, bool) {
	cs, err := interpreter.DecodeCustomizations(value)
	if err != nil || len(cs) != 1 {
		w.log.Warn("stored customization does not decode, ignoring it", "name", name, "error", err)
		return configv1alpha1.ResourceInterpreterCustomization{}, false
	}
	return cs[0], true
}

func (w *Watcher) applyWebhook(name string, value []byte) {
	cfg, err := webhook.DecodeConfiguration(value)
	if err == nil {
		err = w.target.ApplyWebhookConfiguration(cfg)
	}
	if err != nil {
		w.log.Warn("webhook configuration refused", "name", name, "error", err)
		return
	}
	w.webhooks[name] = true
	w.log.Debug("webhook configuration applied", "name", name)
}
