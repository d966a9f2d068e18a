// Package hubtest holds test helpers for the agent's hub client: a fake hub
// (an AgentService on real gRPC over real TLS on 127.0.0.1, driven by hand
// from the test), the certificates for it, message builders, and fakes of
// the member side (an Applier that records its calls, a StatusSource).
//
// It never imports hub/: the fake hub is written against the contract
// (api/gen/tether/agent/v1) only.
package hubtest
