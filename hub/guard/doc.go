// Package guard keeps one bad key from stopping a controller loop (DESIGN
// §4, issue 11 point 8): Do runs the work of one key (a template, a
// binding, a cluster's report) and turns a panic into an error that names
// the key, after logging it with its stack and counting it. The loop then
// skips that key (retrying it later like any failure) and goes on with the
// others.
//
// Counts is the tally of such events by component and kind (panics,
// undecodable stored objects, refused agent reports); the hub exposes it
// as the metric tether_hub_controller_errors_total.
//
//	counts := guard.NewCounts()
//	err := guard.Do(log, counts, "render", key, func() error { return r.renderKey(key) })
//
// It imports only go-hclog and the standard library.
package guard
