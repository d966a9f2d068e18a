// Package revocation records revoked users and follows the records on
// every hub replica, so that a user revoked through one replica is refused
// by all of them (issue 14).
//
// A user is the name in a client certificate the hub's CA signed
// (hub/pki); its role is stored apart (hub/roles). Revoking a user name stores
// store.RevokedUserKey(name) with the time of the revocation; from then
// on every certificate of that name (admin, viewer or user) issued up to that
// time (pki.IssuedAt) is refused, and one issued afterwards (`tetherctl
// user create` again) is accepted. Certificates carry whole seconds, so
// one issued in the same second as the revocation is refused too. Agent
// certificates are not users: hub/membership revokes those.
//
//	v, err := view.New(st, append(view.HubPrefixes(), revocation.Prefix()), logger) // the replica's view
//	l := revocation.New(st, v, logger)
//	go l.Run(ctx)                              // follows /tether/revoked-users/ in the view on every replica
//	r, err := l.Revoke(ctx, "bob", "alice")    // durable once it returns
//	err = l.Check(ctx, cert)                   // ErrRevoked, naming the revocation
//	<-l.Changed()                              // closed on any change: open streams check again
//
// Check answers from what Run last followed in the replica's view
// (hub/view's Records, the follower it shares with hub/roles); until Run
// has had the view's first list it reads the record from the store, so
// that a replica that just started never accepts a revoked certificate.
// A record that does not decode revokes every certificate of its name
// issued until it was read (failing closed).
//
// It imports hub/store, hub/view and hub/pki.
package revocation
