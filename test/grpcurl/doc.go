// Package grpcurl runs the README's "Any language: grpcurl" commands,
// exactly as written there, against a real tether-hub process: a viewer's
// credentials written as PEM files by `tetherctl user create --pem`, the
// services listed through server reflection, GetPlacement, and a
// WatchPlacement followed through a change and the template's deletion.
//
// The commands are read from README.md, from the sh code block after each
// `<!-- grpcurl:NAME -->` marker (readmeBlocks), so the README and the
// test cannot drift apart. grpcurl is the version pinned in mk/proto.mk
// (GRPCURL_VERSION), installed from the Go module proxy by `make
// grpcurl-path`, or $TETHER_GRPCURL when set. tether-hub and tetherctl are
// built from this repository in TestMain.
package grpcurl
