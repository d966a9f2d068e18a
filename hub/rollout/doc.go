// Package rollout is the leader's rollout loop (DESIGN §11, Rollouts): for
// every binding whose template a RolloutPolicy selects, it runs the pure
// rollout stage (hub/pipeline/rollout.Step) on what the agents reported
// and stores the result, so that the renderer (hub/render) gives each
// cluster the revision the rollout admitted it to and holds the others.
//
// # Usage
//
//	l := rollout.New(fenced, v, renderer, aggregator, leases, rollout.Config{}, logger)
//	err := l.Run(ctx) // leader only; returns nil when ctx ends
//
// # What it reads and writes
//
// The replica's view (hub/view): templates and RolloutPolicies
// (/tether/objects/), bindings, clusters (their labels) and the rollout
// records (/tether/rollouts/<work key>); one subscription, no store watch
// of its own. From the renderer (Renders) each paced key's newest
// revision and the versions rendered at it; from the aggregator
// (Observer) what each cluster's agent last acked and reported: a report
// counts for the revision only when its version is one the renderer
// rendered at that revision (the objects carry
// rollout.RevisionAnnotation, so versions of two revisions differ). A
// cluster is reachable unless its lease is Unknown (or it has none once
// the start-up grace is over): an unreachable cluster is skipped, never
// failed.
//
// It writes one record per rolled-out work key (rollout.Record: the
// State, the policy, the template's last contents for undo) through the
// fenced store, conditional on the revision it read; a write that loses
// (an operator's pause, another leader) is retried from the record the
// view then shows. A record that does not decode is left alone: the
// renderer holds every cluster of that key until it is repaired.
// Everything it needs survives in the store, so a new leader or a
// restarted hub resumes each rollout at the step it was at: the record
// says when the hub last watched the rollout (Watched, written at most
// every WatchInterval while it is in progress), and the first step of a
// term moves the deadlines and soaks of the clusters in flight by the gap
// nobody watched (Record.Unwatched); within the start-up grace a rollout
// whose cluster in flight has no lease yet waits for its agent. A soak
// counts from when the hub first saw the version Healthy (Record.Healthy),
// not from an agent's observe time, which may predate the version. A
// binding not placed yet is not stepped.
//
// Passes run on every change of the view, of the renderer's revisions,
// at the time Step asks to be woken, and every PollInterval, since acks,
// reports and leases come without a notification.
//
// It imports hub/pipeline/rollout, hub/pipeline/work, hub/view,
// hub/store, hub/render (its Rollout type), hub/aggregate (its Observed
// type), hub/pipeline/lease, internal/protocol (the reconnect delay of the
// start-up grace) and api/.
package rollout
