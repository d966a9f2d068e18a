// Package lease is what the hub knows of a member cluster's liveness,
// pure: a cluster's Lease (its State, Ready, NotReady or Unknown, and its
// agent's last heartbeat) and the one conversion of a heartbeat into the
// Cluster's status (ClusterStatus, APIEnablements). hub/liveness keeps
// the leases (their clock, expiry and records); the client API and the
// placement stage read them through this package, so that neither
// imports a loop.
//
// It imports api/ and Kubernetes API types.
package lease
