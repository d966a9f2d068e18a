// Package tunnelconn owns the member proxy's byte stream: Conn, a net.Conn
// over one gRPC stream of TunnelFrames (tether.agent.v1 TunnelService), used
// on both ends, the hub's (Tunnel's server stream) and the agent's (its
// client stream), so that each end can speak plain HTTP/1.1 over it; and
// Listener, a net.Listener fed with such connections, for the agent's
// in-process HTTP server (no port is opened).
//
// One proxied connection is one gRPC stream, so it inherits HTTP/2's flow
// control per stream: a reader that stops reading stops its own stream and
// no other. Conn reads one frame ahead at most.
//
// It imports only the generated agent protocol.
package tunnelconn
