// Package status turns what agent/apply applied into StatusReports for the
// hub (DESIGN §4, Status): for every object of a held work, ReflectStatus
// and health through the interpreter (Karmada's work-status rule: no health
// hook means Healthy, an error means Unknown, with the error in the
// manifest's message), assembled per work version
// with a digest of the content. Reports are coalesced per work, sent at most
// once per MinInterval per work, and only when the digest changed since the
// last report sent for that work, or when the hub asked again (Resend).
//
// # Use
//
//	r := status.New(status.Config{Source: applier, Interpreter: interp}, logger)
//	go r.Run(ctx)            // returns when ctx ends
//	for rep := range r.Reports() { ... }
//
// Reporter implements agent/hubclient.StatusSource. It re-reads every held
// work every Resync as well as on every change the Source signals, so
// objects nobody watches (read-only ones) are reported too; an unchanged
// status is not sent again.
//
// An interpreter error (a failed health or status rule) is in the
// manifest's message, within maxMessageBytes; one from a webhook the member
// cannot reach says so (agent/customizations.Explain). Refresh reads every
// work again after the interpreter's customizations changed.
//
// It imports agent/apply (for its Snapshot type), agent/customizations
// (Explain), the interpreter's config types and the generated agent
// protocol; never hub/.
package status
