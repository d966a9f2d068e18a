// Package state is the agent's local state (DESIGN §4): the works it holds
// (content and version, the hub identity each came from, whether it is
// orphaned, and the deletion decided for it and not yet done), the identity of the hub it last synced with, and the status
// digests it last reported, and the user's interpreter customizations the
// hub last sent. With it, an agent restarted while the
// hub is unreachable keeps reconciling what it holds.
//
// # Where it lives
//
// A Store keeps its state as named blobs in a Backend: Open keeps them as
// files in --data-dir (below), New in any Backend, such as
// agent/state/secret's Kubernetes Secret (--state-secret), which holds the
// same blobs, one data key each. Credentials and keys are not state: they
// stay in --data-dir either way.
//
// # Files
//
//	<data-dir>/state/hub.json            the hub identity
//	<data-dir>/state/works/<sha256>.json one per held work, named by the hash of its key
//	<data-dir>/state/digests.json        the reported status digests
//	<data-dir>/state/customizations.json the interpreter customizations
//
// Each is a JSON document with a format_version, but for a work's record
// of version 3: a line of JSON (format_version and the record's fields), a
// newline, then its WorkUpsert as protobuf bytes. Load also reads the
// versions agents wrote before, 2 (the upsert as protobuf, base64, in
// upsert_proto) and 1 (as protojson); an agent refuses a version it does
// not know.
//
// Every write is atomic: a temporary file in the same directory, fsync,
// rename, fsync of the directory. A reader sees the old file or the new one,
// never half of one. A blob that does not parse is reported as ErrCorrupt
// with its path (or Secret and key) and what to do; it is never silently
// ignored (that could make the agent forget works, and then never delete
// their objects).
//
// Every method takes a context, which bounds its I/O (and at most 30 s,
// backendTimeout); the Store serializes its calls to the backend and is
// safe for concurrent use. Digests are an optimization (a lost one only
// makes the hub ask for a status again), so the client writes them in
// batches; a work's record (and a deletion's) is written before the agent
// acts on it; the hub identity and the customizations soon after they
// change (agent/hubclient's state writer).
//
// It imports only the generated agent protocol, internal/durable (files
// written whole and synced), protobuf and the standard library;
// the Secret backend, which needs client-go, is its subpackage.
package state
