// Package customizations keeps the hub's resource interpreter in step with
// what users applied to config.tether.io (Karmada's config.karmada.io is
// stored under the same group): ResourceInterpreterCustomizations (Lua
// scripts) and ResourceInterpreterWebhookConfigurations.
//
//	w := customizations.New(st, interp, logger)
//	err := w.Run(ctx) // lists, then watches /tether/objects/config.tether.io/
//
// A list loads everything at once (the store only holds what passed the
// client API's validation); a watched change is applied one object at a time,
// so a script the interpreter refuses leaves the previous version in place
// and is logged. A relist after a broken or compacted watch removes the
// webhook configurations that disappeared meanwhile.
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
// It imports hub/store, the interpreter's customization and webhook types and
// the config API group name; the interpreter itself is consumed through the
// small Target interface.
package customizations
