// Package status turns what agent/apply applied into StatusReports for the
// hub (DESIGN §4, Status): for every object of a held work, ReflectStatus
// and health through the interpreter (Karmada's work-status rule: no health
// hook means Healthy, an error means Unknown, with the error in the
// manifest's message), assembled per work version
// with a digest of the content. Reports are sent only when the digest
// changed since the last report sent for that work, or when the hub asked
// again (Resend).
//
// # When a report goes out (schedule.go)
//
// A change the Source signals is read Coalesce (DefaultCoalesce, 50 ms)
// after the first signal, so the burst of events one change makes costs
// one report, and reported at once if the schedule allows: each work may
// send DefaultWorkBurst (4) reports back to back, refilled one per
// MinInterval (the hub's Settings.status_min_interval, 2 s by default), so
// a rollout's few status changes each reach the hub within the coalescing
// delay while a flapping work costs one report per MinInterval; all works
// together stay within DefaultStreamRate (2,500 a second) and
// DefaultStreamBurst (10,000), half the hub's per-stream limit for status
// reports (hub/agentapi: 5,000 a second, bursts of 20,000).
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
// (Explain), api/config/v1alpha1 (the interpreter's config types) and the
// generated agent protocol, never hub/.
package status
