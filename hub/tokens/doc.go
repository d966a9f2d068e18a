// Package tokens is the hub's bootstrap trust (DESIGN §8): the bootstrap
// tokens agents register with, and the key each registered cluster name is
// bound to.
//
// # Tokens
//
// A token is "<id>.<secret>" as in kubeadm: six and sixteen characters of
// [a-z0-9]. The id is public (it names the token in `tetherctl token list`);
// only the SHA-256 of the secret is stored, at store.TokenKey(id). A token
// expires, may be bound to one cluster name, and may allow a number of
// registrations (0: any number until it expires). Expired tokens are pruned
// when tokens are listed or created; used-up ones stay until they expire, so
// that a second use is refused as "used up" rather than "unknown".
//
// # Agents
//
// store.AgentKey(name) binds a cluster name to the fingerprint
// ("sha256:<hex>" of the SubjectPublicKeyInfo) of the key its agent
// registered. Register signs a CSR only when the name is free, removed, or
// bound to the CSR's own key; a new key for a bound name (or for a cluster
// that exists without a binding, minted with `tether-hub mint-agent`) is
// recorded as pending and refused until Approve, which needs the pending
// key's fingerprint. A pending key is never replaced: while one is
// pending, a registration with any other key is refused and recorded
// nowhere, until Approve or Reject decides the pending one. Register also
// refuses topology labels that are not Kubernetes labels, and with
// Config.NewClustersCordoned creates the Cluster record cordoned. Remove
// tombstones the
// binding; Authorize, called on every agent stream, refuses the certificates
// of removed clusters and of keys that are no longer the bound one. Watch
// reports every change, so the agent service can end streams whose
// certificate was just revoked.
//
// # Renewal
//
// Renew, asked over an agent's stream, signs a CSR for a new key with the
// cluster name of the stream's certificate (never a name from the message)
// and binds the name to the new key. The key of the certificate that asked
// stays accepted as the previous key until that certificate expires, so
// that neither the live stream nor a reconnect racing the agent's reload is
// refused; after it, and at once after Remove or an approved replacement,
// only the new key is.
//
//	r := tokens.New(st, ca, tokens.Config{}, logger)
//	tok, info, err := r.CreateToken(ctx, tokens.Options{TTL: time.Hour, Uses: 1})
//	res, err := r.Register(ctx, tokens.Request{Token: tok, Cluster: "edge-1", CSRPEM: csr})
//	err = r.Authorize(ctx, "edge-1", peerCert) // on Connect
//	res, err = r.Renew(ctx, tokens.Renewal{Cluster: "edge-1", Cert: peerCert, CSRPEM: csr})
//
// The decisions (token checks, key binding) are pure functions of the stored
// records and the request, tested with tables; Registry wraps them in
// conditional store writes.
//
// It imports hub/store, hub/pki, internal/certs and the cluster API types.
package tokens
