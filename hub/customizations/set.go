package customizations

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"sync"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// MaxSetBytes bounds the set sent to agents, in bytes of stored objects
// (customizations and webhook configurations together): 1 MiB, some 200
// customizations of 5 KiB, and what an agent's state Secret can hold. A
// larger set is not sent: agents keep the one they hold, and the hub logs
// an error on every change until the set is small enough again.
const MaxSetBytes = 1 << 20

// set is the customizations and webhook configurations the target holds,
// as agents receive them (agentv1.Customizations).
type set struct {
	mu      sync.Mutex              // guards cur and changed
	cur     *agentv1.Customizations // nil until the first load
	changed chan struct{}           // closed when cur is replaced
}

// Customizations returns the set agents are to hold, nil until the stored
// objects are loaded, and a channel closed once a newer set replaces it.
// The set is shared: treat it as read-only.
func (w *Watcher) Customizations() (*agentv1.Customizations, <-chan struct{}) {
	w.set.mu.Lock()
	defer w.set.mu.Unlock()
	if w.set.changed == nil {
		w.set.changed = make(chan struct{})
	}
	return w.set.cur, w.set.changed
}

// publishSet makes the set of what the target holds now the one agents
// receive, when its version changed and it is within MaxSetBytes. Only
// Run's goroutine calls it.
func (w *Watcher) publishSet() {
	next, size := setOf(w.rics, w.webhooks)
	if size > MaxSetBytes {
		w.log.Error("customizations not sent to agents: the set is larger than the hub sends; agents keep the set they hold",
			"bytes", size, "max_bytes", MaxSetBytes)
		return
	}
	w.set.mu.Lock()
	defer w.set.mu.Unlock()
	if w.set.cur != nil && w.set.cur.GetVersion() == next.GetVersion() {
		return
	}
	w.set.cur = next
	if w.set.changed != nil {
		close(w.set.changed)
	}
	w.set.changed = make(chan struct{})
	w.log.Info("customizations for agents", "version", next.GetVersion(),
		"customizations", len(next.GetResourceInterpreterCustomizations()), "webhook_configurations", len(next.GetWebhookConfigurations()))
}

// setOf is the set of the stored objects rics and webhooks, sorted by
// name, with its version (a SHA-256 of names and contents; empty for the
// empty set), and its size in bytes.
func setOf(rics, webhooks map[string]applied) (*agentv1.Customizations, int) {
	h := sha256.New()
	size := 0
	add := func(kind string, objs map[string]applied) [][]byte {
		names := make([]string, 0, len(objs))
		for name := range objs {
			names = append(names, name)
		}
		sort.Strings(names)
		out := make([][]byte, 0, len(names))
		for _, name := range names {
			raw := objs[name].raw
			h.Write([]byte(kind + "\x00" + name + "\x00"))
			h.Write(raw)
			h.Write([]byte{0})
			size += len(raw)
			out = append(out, raw)
		}
		return out
	}
	s := &agentv1.Customizations{
		ResourceInterpreterCustomizations: add(KindCustomization, rics),
		WebhookConfigurations:             add(KindWebhook, webhooks),
	}
	if len(rics)+len(webhooks) > 0 {
		s.Version = hex.EncodeToString(h.Sum(nil)[:16])
	}
	return s, size
}
