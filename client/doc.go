// Package client is the Go client of a Tether hub, for programs that ask
// the hub where things run or change what it holds (dashboards, CI gates,
// other systems' schedulers). Every online tetherctl command connects
// through it (LoadConfig, Dial, Config.Explain) and calls its typed calls;
// tetherctl only prints what they return.
//
// It owns three things:
//
//   - the connection: Config (LoadConfig reads the credentials file the hub
//     writes for its admin, DATA_DIR/admin.conf, and `tetherctl user create`
//     writes per user; or fill Address and the PEM fields yourself), and
//     Dial, mutual TLS 1.3 against the hub's CA. Address may list a hub's
//     replicas, comma-separated; each address's certificate is then checked
//     for that address's host;
//   - typed calls returning the generated API types of
//     github.com/tetherproj/tether/api/gen/tether/hub/v1, one for every
//     RPC of the hub's client API: Apply, Get, List (every page, at one
//     revision; ListPage reads one), Delete, Watch (resumes from the last
//     revision it delivered when the connection breaks), GetPlacement,
//     WatchPlacement, WatchPlacements (every selected template's placement,
//     change after change, resumed like Watch), WaitPlaced (placements
//     carry the clusters the scheduler rejected, with every reason) and
//     Simulate; ListClusters, GetCluster, Cordon, Uncordon, Taint, Label,
//     Annotate, SetResourceModels, Approve, RejectKey and RemoveCluster;
//     CreateToken, ListTokens and DeleteToken; CreateUser, SetUserRole,
//     ListUserRoles, RevokeUser and ListRevokedUsers; RolloutStatus,
//     PauseRollout, ResumeRollout and UndoRollout. The generated service clients are there too
//     (Client.Objects, Placements, Clusters) for a request the typed calls
//     do not make;
//   - the retry policy: Retryable says which errors a watch is resumed
//     after (the stream ended, Unavailable, Internal, Aborted), Restartable
//     which let a caller start over from a fresh List (those, and a
//     compacted revision); tetherctl retries on these and no others;
//   - errors that say what to do: every call's error is an *Error whose
//     message explains the gRPC status as tetherctl prints it (an
//     unreachable hub, a certificate of another hub, a missing role, a
//     compacted revision), and grpc/status still reads its code. Explain does
//     the same for errors of the generated clients.
//
// Defaults: TLS 1.3 at least; each connection attempt gives up after 5 s;
// responses up to 64 MiB; a broken watch is re-opened after 100 ms,
// doubling to 5 s between failed attempts, until its context ends. Each
// watch is one gRPC stream, and a hub serves at most
// --max-streams-per-connection (100) calls at once on one connection:
// further ones wait.
//
// A minimal program (examples/client is a whole one):
//
//	cfg, err := client.LoadConfig("admin.conf")
//	...
//	c, err := client.Dial(ctx, cfg)
//	...
//	defer c.Close()
//	pl, err := c.WaitPlaced(ctx, &hubv1.ObjectRef{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "settings"})
//
// The file format itself is internal/clientconfig's and the dialing of
// replica lists internal/hubdial's, shared with tetherctl and the agent.
package client
