package customizations

import (
	"context"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// load replaces the target's customizations and webhook configurations with
// those of kvs, then publishes the scope of what differs from what was
// applied before (everything, the first time).
func (w *Watcher) load(kvs []store.KV) {
	var rics []configv1alpha1.ResourceInterpreterCustomization
	loaded := map[string]applied{}
	seen := map[string]bool{}
	var changed Scope
	for _, kv := range kvs {
		ref, ok := store.ParseObjectKey(kv.Key)
		if !ok {
			continue
		}
		switch ref.Kind {
		case KindCustomization:
			if c, ok := w.decodeCustomization(ref.Name, kv.Value); ok {
				rics = append(rics, c)
				loaded[ref.Name] = applied{modRevision: kv.Revision, scope: TargetScope(c.Spec.Target)}
			}
		case KindWebhook:
			seen[ref.Name] = true
			changed.add(w.applyWebhook(ref.Name, kv))
		}
	}
	w.target.LoadCustomizations(rics)
	changed.add(differing(w.rics, loaded))
	w.rics = loaded
	for name, a := range w.webhooks {
		if !seen[name] {
			w.target.RemoveWebhookConfiguration(name)
			delete(w.webhooks, name)
			changed.add(a.scope)
		}
	}
	w.feed.publish(changed)
	if !w.loaded {
		w.loaded = true
		close(w.synced)
	}
	w.log.Info("loaded", "customizations", len(rics), "webhook_configurations", len(w.webhooks))
}

// differing is the scope of the objects whose stored version differs
// between before and after (added, removed or changed), old and new.
func differing(before, after map[string]applied) Scope {
	var sc Scope
	for name, a := range after {
		if b, ok := before[name]; !ok || b.modRevision != a.modRevision {
			sc.add(a.scope)
			sc.add(b.scope)
		}
	}
	for name, b := range before {
		if _, ok := after[name]; !ok {
			sc.add(b.scope)
		}
	}
	return sc
}

// apply follows one watched change and publishes its scope once the target
// has it.
func (w *Watcher) apply(ctx context.Context, ev store.Event) {
	ref, ok := store.ParseObjectKey(ev.KV.Key)
	if !ok {
		return
	}
	switch ref.Kind {
	case KindCustomization:
		w.feed.publish(w.applyCustomization(ctx, ref.Name, ev))
	case KindWebhook:
		if ev.Type == store.EventDelete {
			w.target.RemoveWebhookConfiguration(ref.Name)
			w.feed.publish(w.webhooks[ref.Name].scope)
			delete(w.webhooks, ref.Name)
			w.log.Info("webhook configuration removed", "name", ref.Name)
			return
		}
		w.feed.publish(w.applyWebhook(ref.Name, ev.KV))
	}
}

// applyCustomization applies or removes one customization and returns the
// scope of the change: the previous and the new version's targets, or
// nothing when the target refused it (it keeps the previous version).
func (w *Watcher) applyCustomization(ctx context.Context, name string, ev store.Event) Scope {
	prev := w.rics[name]
	if ev.Type == store.EventDelete {
		w.target.RemoveCustomization(name)
		delete(w.rics, name)
		w.log.Info("customization removed", "name", name)
		return prev.scope
	}
	c, ok := w.decodeCustomization(name, ev.KV.Value)
	if !ok {
		return Scope{}
	}
	if err := w.target.ApplyCustomization(ctx, &c); err != nil {
		w.log.Warn("customization refused, keeping the previous version", "name", name, "error", err)
		return Scope{}
	}
	cur := applied{modRevision: ev.KV.Revision, scope: TargetScope(c.Spec.Target)}
	w.rics[name] = cur
	w.log.Info("customization applied", "name", name)
	var sc Scope
	sc.add(prev.scope)
	sc.add(cur.scope)
	return sc
}

func (w *Watcher) decodeCustomization(name string, value []byte) (configv1alpha1.ResourceInterpreterCustomization, bool) {
	cs, err := interpreter.DecodeCustomizations(value)
	if err != nil || len(cs) != 1 {
		w.log.Warn("stored customization does not decode, ignoring it", "name", name, "error", err)
		return configv1alpha1.ResourceInterpreterCustomization{}, false
	}
	return cs[0], true
}

// applyWebhook applies one stored webhook configuration and returns the
// scope of the change: the previous and the new version's rules, nothing
// when the target refused it or already had this version (a relist).
func (w *Watcher) applyWebhook(name string, kv store.KV) Scope {
	cfg, err := webhook.DecodeConfiguration(kv.Value)
	if err == nil {
		err = w.target.ApplyWebhookConfiguration(cfg)
	}
	if err != nil {
		w.log.Warn("webhook configuration refused", "name", name, "error", err)
		return Scope{}
	}
	prev, had := w.webhooks[name]
	cur := applied{modRevision: kv.Revision, scope: WebhookScope(&cfg)}
	w.webhooks[name] = cur
	w.log.Debug("webhook configuration applied", "name", name)
	if had && prev.modRevision == cur.modRevision {
		return Scope{}
	}
	var sc Scope
	sc.add(prev.scope)
	sc.add(cur.scope)
	return sc
}
