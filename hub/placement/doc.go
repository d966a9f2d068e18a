// Package placement holds the scheduling decisions about one binding that
// the hub's scheduling loop (hub/schedloop), its client API
// (hub/clientapi) and tetherctl share: whether a binding is scheduled now
// (NeedsSchedule, Managed) and what a decision records on it (the
// applied-placement and rejections annotations, read with
// AppliedPlacement and Rejections; the Scheduled condition).
//
// It is pure: it imports only the API types, never the store, so that
// tetherctl can use it without linking the hub's etcd server.
package placement
