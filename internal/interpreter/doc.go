// Package interpreter is Tether's resource interpreter: Karmada's
// operations (InterpretReplica, InterpretComponent, ReviseReplica, Retain,
// AggregateStatus, InterpretStatus, InterpretHealth, InterpretDependency)
// answered by, in order of precedence, the Lua scripts of
// ResourceInterpreterCustomizations (RICs), interpreter webhooks, the
// built-in third-party Lua customizations and the native Go handlers.
package interpreter
