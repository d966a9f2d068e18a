// Package leader elects one hub replica among those sharing an etcd
// cluster to run the controllers that write decisions (DESIGN §3, §7):
// the detector, the scheduling loop (with eviction), the aggregator's
// writes and registration. Every replica serves agent streams and clients
// whether it leads or not.
//
// # Usage
//
//	var fence store.Fence
//	fenced := st.Fenced(&fence) // handed to the controllers
//	el := leader.New(st.Client(), &fence, leader.Config{Name: addr}, logger)
//	err := el.Run(ctx, func(ctx context.Context) error {
//		return runControllers(ctx) // returns once ctx ends
//	})
//
// Run campaigns with an etcd session (a lease with Config.TTL, kept alive
// by the client) under Config.Prefix (/tether/leader), using the client's
// concurrency package. Once elected it holds the fence on its leadership
// key (its create revision) and calls lead with a context that ends as
// soon as leadership is lost: the session's lease expired or could not be
// kept alive (etcd unreachable for TTL, a partition, a long pause), or the
// key was deleted. lead must then return; Run releases the fence and
// campaigns again with a new session. Writes through the fenced view are
// conditional on the key still being this term's, so a deposed leader that
// has not noticed yet writes nothing (store.ErrNotLeader).
//
// When Run ends with ctx it resigns, so a replica stopped on purpose hands
// over without waiting for its lease; a replica that dies (kill -9) hands
// over once its lease runs out, within TTL.
//
// A hub on its embedded etcd is the only replica there can be
// (Config.Alone): it does not campaign. It leads from the start until Run
// ends with the fence open (store.Fence.Open), holding no session and no
// key, so a process too starved of CPU to keep a session's lease alive
// does not end its own term (and restart its controllers), and a restart
// after a kill -9 does not wait for the dead process's lease.
//
// It imports the etcd client, hub/store and go-hclog.
package leader
