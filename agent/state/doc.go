// Package state is the agent's local state in --data-dir (DESIGN §4): the
// works it holds (content and version, the hub identity each came from, and
// whether it is orphaned), the identity of the hub it last synced with, and
// the status digests it last reported. With it, an agent restarted while the
// hub is unreachable keeps reconciling what it holds.
//
// # Files
//
//	<data-dir>/state/hub.json            the hub identity
//	<data-dir>/state/works/<sha256>.json one per held work, named by the hash of its key
//	<data-dir>/state/digests.json        the reported status digests
//
// Every write is atomic: a temporary file in the same directory, fsync,
// rename, fsync of the directory. A reader sees the old file or the new one,
// never half of one. A file that does not parse is reported as ErrCorrupt
// with its path and what to do; it is never silently ignored (that could
// make the agent forget works, and then never delete their objects).
//
// Digests are an optimization (a lost one only makes the hub ask for a
// status again), so the client writes them in batches; works and the hub
// identity are written before the agent acts on them.
//
// It imports only the generated agent protocol and the standard library.
package state
