package hubclient

import (
	"context"
	"crypto/x509"
	"time"

	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Applier writes works into the member cluster. agent/apply implements it.
//
// The client calls it from one goroutine at a time per work key (never two
// calls for the same key at once), for every version the hub sends, for
// every held work when the agent starts (the hub may be unreachable then),
// and again after a failed result, with backoff. Calls for different keys
// may run concurrently.
type Applier interface {
	// Apply makes the member cluster hold w's objects at w.Version (with
	// w.Options; retain through the interpreter) and keeps them so (drift)
	// until the next Apply or Delete of w.Key. The returned Ack carries the
	// result: APPLIED only when every object applied, otherwise FAILED or
	// CONFLICT with a message, and one ObjectResult per manifest. The
	// client fills Ack.work_key and Ack.version when they are empty.
	//
	// An error means the attempt could not be made at all (e.g. ctx ended
	// or the member API server is unreachable); the client acks FAILED with
	// the error's text and retries with backoff. Apply must be idempotent:
	// the same version may be applied again.
	Apply(ctx context.Context, w state.Work) (*agentv1.Ack, error)

	// Delete removes w's objects per r.Policy (DELETE: delete them; ORPHAN:
	// leave them and strip Tether's ownership labels and annotations) and
	// stops watching them; it logs and counts every object it deletes or
	// orphans with r (the hub, the reason). It is called only when deletion
	// is safe (an explicit WorkDelete from the hub the work came from, after
	// that hub's SyncDone; a work that hub's authoritative SyncDone does not
	// list; or an eviction after the grace period; see agent/doc.go), after
	// the decision is persisted, and again after a restart until it returns
	// nil. r.Policy is never UNSPECIFIED. Objects already gone are not an
	// error.
	Delete(ctx context.Context, w state.Work, r state.Removal) error
}

// StatusSource produces the status reports of the works the agent holds.
// agent/status implements it.
type StatusSource interface {
	// Reports returns the channel of reports to forward to the hub; it is
	// the same channel on every call and is never closed while the client
	// runs. Each report names its work key and version and carries a
	// digest of its items; reports are coalesced per work and sent only on
	// change (a few at once per work, then one per
	// Settings.status_min_interval; agent/status).
	//
	// The client reads the channel only while a stream is up and welcomed,
	// so the source should hold the latest report per work rather than a
	// backlog. It forwards a report only for the version it holds of a
	// work from the connected hub (others would be discarded by the hub),
	// and records each digest it sent for the next Hello; the hub asks
	// with StatusRequest (Resend) for what it lacks.
	Reports() <-chan *agentv1.StatusReport

	// Resend asks for full reports again, regardless of the digests
	// already sent, for keys (all works when keys is empty): the hub sent
	// StatusRequest. It must not block.
	Resend(keys []string)
}

// CapacitySource describes the member cluster for heartbeats. agent/status
// (capacity) implements it.
type CapacitySource interface {
	// Heartbeat returns the cluster's capacity, API enablements,
	// conditions and topology now. models are the hub's resource models
	// (Settings.resource_models) for ResourceSummary.allocatable_modelings;
	// empty for none. The client fills Heartbeat.agent_version. It is
	// called every Settings.heartbeat_interval while a stream is up; on an
	// error the client sends a heartbeat with only the agent version (the
	// lease must not lapse because the member API server is slow).
	Heartbeat(ctx context.Context, models []*agentv1.ResourceModel) (*agentv1.Heartbeat, error)
}

// Credentials are the agent's client certificate and key, which the client
// renews over the stream (renewal.go). agent/tls.go implements them over
// the files of the data directory. The client calls them from its stream
// goroutine only.
type Credentials interface {
	// Certificate returns the certificate in use and when the agent got
	// it, from which its renewal is scheduled (NotBefore is backdated for
	// clock skew, which would be most of a short lifetime).
	Certificate() (cert *x509.Certificate, issued time.Time, err error)
	// Request returns a PEM CSR for the next key: a new one, kept (and
	// asked for again) until Renewed installs a certificate for it.
	Request() (csrPEM []byte, err error)
	// Renewed checks that certPEM is for the requested key and installs
	// both, atomically, for the next TLS handshake.
	Renewed(certPEM []byte) error
}

// Customizations holds the user's interpreter customizations in the
// agent's interpreter. agent/customizations implements it.
type Customizations interface {
	// Load validates set and makes the interpreter run with it in place of
	// the set it held. It returns one line per customization it refused
	// (the rest is loaded); an error means it refused the whole set and
	// kept the previous one. The client calls it from one goroutine at a
	// time: at New with the set the state holds, then for each set the
	// hub sends.
	Load(ctx context.Context, set *agentv1.Customizations) (refused []string, err error)
	// Version is the version of the set loaded last; empty before any.
	Version() string
}
