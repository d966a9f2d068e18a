// Package registration records the member clusters the hub has met under
// /tether/clusters/<name>, where the scheduler and the client API find them.
//
// An agent gets its client certificate either by registering with a
// bootstrap token (hub/tokens, agentapi.Register) or from an admin
// (`tether-hub mint-agent`); either way the certificate's common name is the
// cluster's name, and the first heartbeat on its stream creates the Cluster
// record, with the topology the agent reported as its
// provider, region and zones, and the APIs it serves. Labels that are not
// Kubernetes labels (ValidateLabels) are left out of it, with a warning
// (Register refuses them outright). With the option NewClustersCordoned
// (the hub's --new-clusters-cordoned) a new record starts with the
// NoSchedule taint TaintCordoned, so nothing is placed there until an
// admin uncordons it; NewRecord builds every first record, Register's too. An existing record is
// never replaced: what an admin set there (labels, annotations, taints,
// through the client API's ClusterService) stays. The labels the agent
// reports (tether-agent --labels) are only the initial value of a new
// record; once it exists the hub owns them, and an agent restarting or
// registering again with other labels changes nothing (`tetherctl label
// cluster` does). Only its
// status.apiEnablements follows the agent's heartbeats, rewritten when they
// change (a CRD installed in the member), so that the client API's
// placement queries and Simulate, which read the record, see the kinds the
// scheduler (which reads the lease) sees. Liveness and capacity are
// hub/clusters' leases, not this record.
//
// Only the leader registers (hub/leader), and only on a heartbeat received
// after its registrar started: leases outlive their clusters (a removed
// cluster's lease stays in every replica's memory, and a new leader's
// leases come from liveness records up to a lease old), so a new leader
// must not re-create the record of a cluster an admin removed. A live
// cluster is renewed within a quarter of a lease and registered then.
//
//	r := registration.New(st, leases, logger)
//	err := r.Run(ctx) // follows leases.Wait, creates missing records
//
// Models (models.go) follows every record's spec.resourceModels for the
// agent streams of its replica (hub/agentapi sends them in Settings); it
// runs on every replica, not only the leader:
//
//	m := registration.NewModels(st, logger)
//	err := m.Run(ctx) // lists and watches /tether/clusters/
//	models, changed := m.ResourceModels("edge-1")
//
// It imports hub/store, hub/clusters and the cluster API types.
package registration
