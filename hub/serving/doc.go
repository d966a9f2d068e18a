// Package serving is the hub's serving certificate: issued by the hub CA
// for the names agents and clients dial, re-issued before it expires, and
// handed to every TLS handshake through tls.Config.GetCertificate.
//
//	cert, err := serving.New(ca, serving.Config{Hosts: hosts, Lifetime: 30 * 24 * time.Hour}, logger)
//	tlsConfig := &tls.Config{GetCertificate: cert.GetCertificate, ...}
//	err = cert.Run(ctx) // re-issues it until ctx ends
//
// Each certificate is valid for Config.Lifetime (DefaultLifetime unless
// given; the CA's own expiry caps it) and has a key of its own. It is
// replaced at a point drawn between 60% and 70% of its lifetime, about two
// thirds, leaving a third of it for retries: a failed issue is retried
// every RetryInterval. A new handshake gets the newest certificate; an
// established connection keeps the one it was made with (TLS checks a
// certificate once, at the handshake), so a rotation ends no stream and
// forces no reconnect. Run wakes at least every RecheckInterval and compares
// wall-clock times, so a suspended machine or a clock jump does not leave
// an old certificate served; and a handshake that finds the certificate
// due (Run not yet awake) replaces it itself, so no client is handed a
// certificate past its replacement time while the CA can sign.
//
// The CA certificate follows the leaf in the chain: a registering agent
// pins the CA by hash before it trusts anything (DESIGN §8).
//
// It imports hub/pki, go-hclog and the standard library.
package serving
