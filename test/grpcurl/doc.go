// Package grpcurl tests the hub's client API the way programs outside this
// module use it, against a real tether-hub process.
//
// TestReadmeGrpcurl runs the README's "Any language: grpcurl" commands,
// exactly as written there: a viewer's credentials written as PEM files by
// `tetherctl user create --pem`, the services listed through server
// reflection, GetPlacement, and a WatchPlacement followed through a change
// and the template's deletion. The commands are read from README.md, from
// the sh code block after each `<!-- grpcurl:NAME -->` marker
// (readmeBlocks), so the README and the test cannot drift apart. grpcurl
// is the version pinned in mk/proto.mk (GRPCURL_VERSION), installed from
// the Go module proxy by `make grpcurl-path`, or $TETHER_GRPCURL when set.
//
// TestPreviousReleaseClient is a client of the previous release's
// contract (testdata/contract-<commit>.binpb, written by `make
// compat-contract` from PROTO_COMPAT_BASE): dynamic messages of its
// descriptors, nothing of today's generated code, applying, listing and
// reading placements on today's hub (docs/compatibility.md).
//
// tether-hub and tetherctl are built from this repository in TestMain.
package grpcurl
