// Package agent is the member-cluster agent's composition root: hubclient
// (the one outbound stream, resume and backoff), apply, status and local
// state live in its subpackages. It may import internal/ and api/; it never
// imports hub/ (test/layout enforces it).
package agent
