// Package storewatch tells a hub replica when it has lost its store (etcd)
// and when it has it again, so that the replica hands its agents to other
// replicas while it cannot serve them.
//
//	w := storewatch.Watch{Probe: st.Reachable, Alone: alone, Log: logger,
//		Lost:  func(why string) { /* not ready; agents told to move */ },
//		Found: func(ctx context.Context) { /* catch up, then ready */ }}
//	err := w.Run(ctx) // until ctx ends
//
// Watch.Run reads the store once a second (a linearizable read, 2 s
// timeout). A replica whose reads have failed one after the other for
// 10 s (the leader TTL) is lost: Lost is called once, and Found once when
// a read succeeds again. Only reads the process ran on time count: one
// that started more than 250 ms after it was due, returned more than
// 250 ms after its timeout, or during which the process's runnable
// goroutines mostly (90th percentile of the Go runtime's
// /sched/latencies) waited more than 250 ms to run, says the process is
// starved of CPU, not that etcd is out of reach; it is logged (once per
// episode), counts for nothing, and the 10 s start again after it. A
// partition (etcd stopped or its packets dropped) leaves the process
// running on time and is declared as fast as ever.
//
// A hub alone on its embedded etcd (Watch.Alone) never hands anything
// over: it has no other replica to send agents to, and a store in its own
// process that does not answer means the process is too slow (CPU, disk),
// which sending every agent away and back would only make worse. It logs
// the loss and its end and calls neither Lost nor Found.
//
// CatchUp is what a replica that found its store again does before it
// serves agents: it waits, for at most 30 s, until its rendered works have
// applied the store's current revision.
//
// The decision (state.go) is a pure function of the probes' times and
// results, tested with tables; watch.go runs it, schedwaits.go reads the
// runtime's scheduling latencies. It imports only go-hclog and the
// standard library.
package storewatch
