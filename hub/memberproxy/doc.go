// Package memberproxy owns the hub's side of the member proxy (DESIGN §11,
// reaching members): each member's Kubernetes API served at Karmada's
// cluster proxy path (PathPrefix + NAME + "/proxy/..."), forwarded through
// tunnels that the cluster's agent opens, so that the hub never dials a
// member.
//
//   - Tunnels serves tether.agent.v1 TunnelService: an agent's Listen
//     stream receives an offer per connection the hub wants (Dial), and
//     the agent answers each with a Tunnel stream of its own, a byte pipe
//     (internal/tunnelconn) beside Connect, never inside it.
//   - Handler is the HTTP side: it authenticates the user by the client
//     certificate and asks the client API's decision (Authorizer,
//     clientapi.Server.AuthorizeDoor: roles.Decide with the user's stored
//     grant) whether the user may read or write in the request's namespace
//     (internal/memberreq's Classify: get, list and watch read; a connect
//     subresource such as exec writes, whatever the HTTP method), refuses client impersonation headers, bounds sessions and
//     bytes per user and per cluster (Limits), sets Impersonate-User
//     "tether:<user>" and Impersonate-Group "tether:users" and
//     "tether:role:<role>" (admin, editor or viewer), and forwards the request with apimachinery's
//     upgrade-aware proxy (exec, attach and port-forward over SPDY or
//     WebSocket, logs -f and watches flushed at once). One audit line per
//     request names the user, cluster, verb, resource and path.
//
// The member decides: the agent calls its API server as the hub user
// (agent/memberproxy), so the member's RBAC allows or refuses each request.
//
// It imports hub/clientapi (its errors), hub/roles, hub/agentapi
// (ClusterOf), hub/pki,
// internal/memberreq, internal/tunnelconn and the generated agent
// protocol.
package memberproxy
