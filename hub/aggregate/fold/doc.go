// Package fold is the aggregated-status view of a template: Template folds
// the per-cluster status items into the template's .status through the
// interpreter's AggregateStatus, and TemplateStatus, StaleClusters and
// MergeInto read what the aggregator (hub/aggregate) records on the
// binding, and DecodeWithoutItems decodes a binding without the
// aggregator's items for a reader that decides nothing on them. The
// aggregator, the detector, the client API and tetherctl share it.
//
// It is pure: it imports only the API types, never the store, so that
// tetherctl can use it without linking the hub's etcd server.
package fold
