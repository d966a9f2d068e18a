// Package agentapitest holds in-memory stand-ins for the dependencies of
// hub/agentapi, for tests of the service and of whatever drives it: Works
// (what the renderer will implement) and Statuses (what the aggregator will
// implement). Both are safe for concurrent use.
//
// It imports hub/agentapi, hub/syncstate and the generated agent protocol.
package agentapitest
