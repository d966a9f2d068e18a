// Package customizations keeps the hub's resource interpreter in step with
// what users applied to config.tether.io (Karmada's config.karmada.io is
// stored under the same group): ResourceInterpreterCustomizations (Lua
// scripts) and ResourceInterpreterWebhookConfigurations.
//
//	w := customizations.New(v, interp, logger) // v: the replica's view (hub/view)
//	err := w.Run(ctx) // follows /tether/objects/config.tether.io/ in the view
//
// A full batch of the view (its first list, or a new list after a broken
// or compacted watch) loads everything at once (the store only holds what
// passed the client API's validation) and removes the webhook
// configurations that disappeared meanwhile; a change is applied one
// object at a time, so a script the interpreter refuses leaves the
// previous version in place and is logged. The watcher opens no store
// watch and keeps no relist policy of its own: the view's.
//
// # What a change concerns
//
// Whatever derives from the interpreter (works in hub/render, bindings'
// replicas and dependencies in hub/detector) subscribes to the watcher:
//
//	sub := w.Subscribe() // before listing what derives from the interpreter
//	defer sub.Close()
//	<-w.Synced()         // the stored customizations are loaded
//	...
//	<-sub.Ready()        // in the subscriber's loop
//	sc := sub.Take()     // derive again the objects whose kind sc.Matches
//
// After each change the target has taken, every subscription is handed its
// Scope: the old and new target (apiVersion and kind) of a customization,
// or the rules (groups, versions, kinds, with "*") of a webhook
// configuration; a relist hands over the scope of what differs from what
// was applied. Scopes coalesce until taken (past maxScopeRules rules they
// widen to every kind), so a subscriber never blocks the watcher. A refused
// customization concerns nothing: the target keeps the previous version.
//
// # What agents receive
//
// Agents run Retain, InterpretStatus and InterpretHealth with the same
// customizations (DESIGN §6). After each change the target has taken, and
// after the first load, the watcher makes the objects it applied the set
// agents are to hold (set.go), each as the view decoded it encoded again
// with json.Marshal: the bytes the client API stored, which it encodes
// the same way: hub/agentapi reads it with
// Customizations, which also returns a channel closed when a newer set
// replaces it, and sends it to every agent whose version differs. The
// version is a hash of names and contents, empty for the empty set. A set
// over MaxSetBytes is not sent (logged as an error): agents keep theirs.
//
// It imports hub/store, hub/view, the generated agent protocol,
// internal/interpreter and internal/interpreter/webhook (the customization
// and webhook types), Kubernetes API machinery and api/config/v1alpha1 (the API group name); the interpreter itself is
// consumed through the small Target interface.
package customizations
