// Package authority decides whether the hub may cause deletes in member
// clusters (DESIGN §4: a store that lost or regressed its data never makes
// agents delete). A hub whose store was wiped, replaced or restored from an
// older snapshot still has its CA, so every agent trusts it; without this
// check it would tell them that their works are gone.
//
// # What is detected
//
// A record next to the CA (pki/store-epoch.json in the data directory)
// keeps what this hub last saw of its store:
//
//   - the store epoch, a random id the store gets once when it is new
//     (store.Epoch): a store without one, or with another, was wiped or
//     replaced;
//   - the highest store revision seen (raised every PersistInterval while
//     authoritative): a store whose revision is lower was restored from an
//     older snapshot;
//   - a checkpoint counter this replica also writes to the store
//     (store.CheckpointKey): a store holding a lower one was restored, even
//     with `etcdutl snapshot restore --bump-revision`;
//   - an agent that presents a valid certificate and holds works, for a
//     cluster the store has no record of (ObserveAgent): the store lost it;
//   - an agent that saw a store revision of this store's epoch that the
//     store has not reached (ObserveAgent with its Lineage; for a hub on
//     its embedded etcd, compared at the cluster's first Hello with the
//     revision the store had at start): the store went back, though the
//     whole data directory, the record included, was restored with it.
//
// Check compares at start; Verify compares again, every PersistInterval
// (Run) and before the renderer publishes a new list of the store, so that
// a store replaced or restored under a running hub is found too.
//
// When one is detected the hub is not authoritative: it serves reads and
// agent streams, but Authoritative returns false with the reason, and the
// code that decides deletes honours it (hub/render removes no work and
// vouches for none gone; the agent service tells agents in SyncDone). The
// state is written to the record, so a restart does not forget it (the
// store's revision soon passes the old one again).
//
// # Getting authority back
//
// Only an operator decides: `tether-hub --accept-store-reset` or
// `--adopt-identity ID` (Check with Options.Adopt) takes the store as it
// is, records its epoch, revision and checkpoint as the new baseline, and
// skips the agents' checks for that run (clusters the store lost are
// registered again by their first heartbeat). It also records an Adoption
// in the store (adoption.go), naming the hub's identity and the adopted
// ones, which every Welcome carries: the agents that held this hub not
// authoritative for them trust it again, and keep the works it does not
// have in place, unmanaged (or delete them, Adopt.DeleteUnknown).
//
//	a, err := authority.Check(ctx, st, caDir, authority.Options{Identity: id, Alone: alone}, logger)
//	ok, reason := a.Authoritative()
//	err = a.Run(ctx) // raises the recorded revision and checkpoint
//
// It imports hub/store, internal/durable and go-hclog.
package authority
