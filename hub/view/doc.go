// Package view is each replica's one view of the store: one paged list
// per held prefix and one watch, every stored value decoded once into an
// immutable Object shared by every reader, indexed (client-go's
// tools/cache ThreadSafeStore and Indexers), with coalesced subscriptions
// and snapshots at a revision. The relist/backoff policy of its readers is
// this package's (RelistBackoff, through store.Follow).
//
// # Usage
//
//	v, err := view.New(st, []view.Prefix{
//		{Prefix: store.ObjectsPrefix, Decode: view.Objects, Indexers: view.KeyIndexers()},
//		{Prefix: store.BindingsPrefix, Decode: view.Bindings, Indexers: view.BindingIndexers()},
//		{Prefix: store.ClustersPrefix, Decode: view.Clusters},
//	}, logger)
//	go v.Run(ctx) // one of the hub's tasks
//	sub := v.Subscribe(store.BindingsPrefix)
//	defer sub.Close()
//	for range sub.Ready() {
//		b := sub.Take() // b.Full: replace what you hold; else apply b.Changes
//	}
//	// or, for a reader that waits on nothing else:
//	v.Each(ctx, apply, store.ClustersPrefix) // apply(b) for each Batch
//
// # What it guarantees
//
// Run lists every prefix as of one revision R (ListEachAt, paged) and
// publishes the list whole, then follows one watch of everything under
// store.Root from R+1, so that changes come in one revision order and the
// view's Revision advances with every change to the store, held prefix or
// not. A watch that fails (compaction, an etcd outage) lists again; the
// readers keep the previous view until the new list is complete, then get
// a Full batch. Synced is closed after the first list; Relists counts the
// lists published.
//
// A Batch is consistent as of its Revision: every change up to it is in
// that batch or an earlier one. A reader that is slow holds one pending
// mark per changed key (coalesced: it reads each key's object as it is
// when it takes it), never a backlog, and never holds the view up.
//
// Stored bytes that do not decode are never treated as absent: the Object
// keeps the last value that decoded (none after a list of a restarted
// hub) and carries the error, so that each reader can hold the key as
// unknown (hub/render's rule: unknown means keep).
//
// Objects are shared: a reader never changes what an Object's Value
// points to; it copies first.
//
// # Readers
//
// The renderer (hub/render), the scheduling loop (hub/scheduler), the
// detector (hub/detector), the WorkloadRebalancer loop (hub/rebalancer),
// the rollout loop (hub/rollout),
// the aggregator's loop (hub/aggregate's Run), the interpreter
// customizations' watcher (hub/customizations, a subscription to a prefix
// under the objects') and the clusters' resource models (hub/membership's
// Models) read the view and open no store watch of their own; the
// aggregator reads a binding whole from the store only when a flush keeps
// items as written, which the view leaves out. The revoked users
// (hub/revocation) and the users' roles (hub/roles) follow their
// prefixes, which the hub adds to HubPrefixes, through Records: the one
// follower of small record sets held whole by name. Still on their own
// list and watch, each for a reason: the aggregator's relay and
// pruning of agents' reports, under /tether/reports/, which the view does
// not hold; the liveness records' follower (hub/liveness) and the agent
// records' watch of hub/membership's Registry, under prefixes the view
// does not hold.
//
// It imports hub/store, hub/aggregate/fold (the binding decoder),
// hub/pipeline/rollout (the rollout records' decoder, DecodeRecord), api/,
// Kubernetes API machinery, k8s.io/client-go/tools/cache and go-hclog.
package view
