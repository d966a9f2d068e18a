// Package registration records the member clusters the hub has met under
// /tether/clusters/<name>, where the scheduler and the client API find them.
//
// Until bootstrap tokens exist (agentapi.Register is Unimplemented), a
// cluster registers itself by connecting: its agent presents a client
// certificate the hub's CA issued for it (`tether-hub mint-agent`), whose
// common name is the cluster's name, and the first heartbeat on that stream
// creates the Cluster record, with the topology the agent reported as its
// provider, region and zones. An existing record is never replaced: what an
// admin set there (labels, taints) stays. Liveness is hub/clusters' leases,
// not this record.
//
//	r := registration.New(st, leases, logger)
//	err := r.Run(ctx) // follows leases.Wait, creates missing records
//
// It imports hub/store, hub/clusters and the cluster API types.
package registration
