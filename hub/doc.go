// Package hub is the hub's composition root. Its subpackages own one
// responsibility each (store, detector, scheduler, render, aggregate,
// clusters, server, pki); pure logic (scheduler, render) does no I/O.
// The hub may import internal/ and api/, never agent/.
package hub
