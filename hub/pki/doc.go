// Package pki is the hub's certificate authority: created on first start in
// the hub's data directory, or given as files (LoadCA), or sealed for the
// store with AES-256-GCM under a key every hub replica is given (Seal,
// OpenSealed, ReadEncryptionKey). It issues the hub's serving certificate
// and the client certificates of agents and users, and maps a verified
// client certificate back to an Identity. A CA whose key is not its
// certificate's is refused.
//
// An identity lives only in the certificate: the subject's common name is the
// cluster name (agents) or the user name (users), and the organization says
// which: "tether:agent" for agents, "tether:admin" or "tether:viewer" for
// users. The hub never takes an identity from a message.
//
// It imports internal/certs (the primitives the agent shares),
// internal/durable (files written whole and synced) and the standard
// library.
package pki
