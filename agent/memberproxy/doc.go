// Package memberproxy owns the agent's side of the member proxy (DESIGN
// §11, reaching members): it holds a Listen stream to the hub on a
// connection of its own (never the works stream's), opens a Tunnel stream
// for each of the hub's offers, and serves HTTP on those tunnels
// (internal/tunnelconn's Listener: no port is opened) by forwarding each
// request to its member's API server with the agent's own credentials and
// the hub user's identity as Kubernetes impersonation, so that the
// member's RBAC allows or refuses it.
//
// The member's owner decides with Mode (tether-agent --member-proxy): off
// (the agent never listens), read-only (only requests that
// internal/memberreq classifies as reads pass) or full. Whatever the mode,
// Handler accepts only the identity the hub sets (memberreq.UserPrefix,
// groups with that prefix, nothing else impersonated, no Authorization):
// a hub cannot make the agent act as a member's own user or group.
// Each request gets one audit line with the user, verb, resource and path.
//
// It imports internal/tunnelconn, internal/memberreq, internal/backoff and
// the generated agent protocol; never hub/.
package memberproxy
