// Package roles owns who may do what on the hub (DESIGN §8): the roles
// admin, editor and viewer, each fleet-wide or bound to a list of
// namespaces (Grant), the one authorization decision every door calls
// (Decide), and the users' stored grants, followed on every replica
// (Book); Allows is the same decision without the refusal's words, for
// the filters of lists and watches.
//
// A user is the name in a client certificate the hub's CA signed
// (hub/pki). Its grant is the record stored at store.UserRoleKey(name)
// when there is one, whatever the certificate says; certificates issued
// before roles were stored, and the admin.conf the hub writes, carry
// admin or viewer and are fleet-wide in that role until a record names
// them (CertGrant). Changing a record changes what every open connection
// of that name may do: the doors follow Changed and decide again.
//
//	book := roles.New(st, v, logger)                            // v: the replica's view, holding roles.Prefix()
//	go book.Run(ctx)                                            // follows /tether/user-roles/ in the view
//	_, err := book.Set(ctx, "alice", roles.Grant{Role: roles.Editor, Namespaces: []string{"team-a"}}, "admin")
//	g, err := book.GrantOf(ctx, id)                             // id: pki.IdentityOf(cert)
//	err = roles.Decide(id.Name, g, roles.Write, roles.Target{Kind: "Deployment", Namespace: "team-b"}) // ErrDenied naming team-b
//	<-book.Changed()                                            // closed on any change
//
// Decide's table: reading a namespaced object needs any role in its
// namespace, writing one an editor or admin there; a cluster-scoped kind
// (ClusterPropagationPolicy, ClusterOverridePolicy, interpreter
// customizations, CRDs, Namespaces, clusters, tokens, users) is read with
// a fleet-wide role, cluster records with any role, and written only by a
// fleet-wide admin. An unreadable record grants nothing (failing closed).
// Book follows the records through hub/view's Records, the follower it
// shares with hub/revocation.
//
// It imports hub/store, hub/view and hub/pki.
package roles
