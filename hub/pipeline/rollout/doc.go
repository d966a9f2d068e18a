// Package rollout is the pipeline's rollout stage, pure: for one binding
// whose template a RolloutPolicy selects, which clusters may take the
// template's newest revision now and which keep the stable one.
//
// Compile turns a policy's spec into a Strategy (its waves, concurrency,
// health gates and maintenance windows, parsed once). Step takes the
// Strategy, the revision to roll out, the binding's target clusters (their
// labels and whether their lease is ready), what the agents reported of
// that revision on each (acked applied or failed, health and since when)
// and the previous State, and returns the next State and when time alone
// would change it. State is durable (it is what the hub stores) and
// State.Target says which revision a cluster's work is rendered at.
//
// The rules, with OCM's vocabulary:
//   - clusters go in waves: the mandatory decision groups first, in the
//     order given (any failure there pauses the rollout), then the others
//     (type Progressive: one wave; ProgressivePerGroup: one wave per value
//     of the groupBy label, in order, clusters without it last; All: every
//     cluster at once);
//   - within a wave at most maxConcurrency clusters are in flight
//     (Updating or Soaking) for Progressive;
//   - an admitted cluster succeeds once every work is applied at the
//     revision and it has been Healthy for minSuccessTime, counted from the
//     first Healthy report of that revision (a report of an older revision
//     never counts: Report holds the new revision's only); Unhealthy
//     sends it back to Updating; not succeeded within progressDeadline is a
//     failure; more failures than maxFailures pause the rollout;
//   - an unreachable cluster neither blocks nor fails: it is Skipped, and
//     when it is back it is gated like the others (Late);
//   - a cluster selected by a maintenance window is admitted only while
//     one of its windows is open (Waiting until then); outside mandatory
//     groups a waiting cluster does not hold the next wave;
//   - a new revision restarts the rollout at the first wave; the stable
//     revision stays the last one that completed;
//   - an operator's Pause stops admissions (clusters in flight go on being
//     judged); Resume after a failure pause tolerates the failures so far.
//
// DecodePolicy types a stored RolloutPolicy; Select chooses the one that
// paces a template (its namespace, highest priority, then name) and
// Revision names what a template and its override policies would render
// (the renderer and the hub's rollout loop both call them); RevisionAnnotation carries the revision on the
// rendered objects. Condition is a Record as the condition the client API
// adds to the template's .status.
//
// It imports api/policy/v1alpha1, internal/overrides,
// github.com/robfig/cron/v3 and Kubernetes API machinery; it does no I/O
// and reads no clock.
package rollout
