// Package api is Tether's contract: the protobuf services between hub, agents
// and clients (.proto files under api/tether, generated Go under api/gen) and the Go types of the
// objects users write (policies, interpreter customizations, clusters,
// bindings) with their defaulting and validation. It imports nothing; its
// packages import no other package of this module (test/layout checks it).
package api
