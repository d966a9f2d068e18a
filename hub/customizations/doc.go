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
// It imports hub/store, the interpreter's customization and webhook types and
// the config API group name; the interpreter itself is consumed through the
// small Target interface.
package customizations
