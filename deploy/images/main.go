// Command images builds Tether's container images without a container
// engine: for each of tether-hub and tether-agent, a static binary
// (CGO_ENABLED=0, -trimpath, stripped) on an empty base, written as an OCI
// image layout in a tar file, OUT/NAME.oci.tar. `make images` runs it.
//
// Each image has one layer: the binary at /usr/local/bin/NAME, an empty /tmp
// (mode 1777) and the binary's data directory (/var/lib/tether or
// /var/lib/tether-agent) owned by 65532. The configuration runs the binary as
// its entrypoint as user 65532:65532. Nothing is fetched from a registry:
// there is no base image, no shell, no libc and no CA bundle (the hub and the
// agent trust only their own CA; an external etcd's CA is given with
// --etcd-cafile).
//
// The result is reproducible: every timestamp (file modification times, the
// image's creation time) is --epoch, by default $SOURCE_DATE_EPOCH, so two
// builds of one commit have one digest.
//
// Usage (from the repository root):
//
//	go run ./deploy/images -out bin/images -version v0.3.0 -commit abc1234 -epoch 1700000000
//
// Load a result with e.g. `skopeo copy oci-archive:bin/images/tether-hub.oci.tar
// docker://REGISTRY/tether-hub:v0.3.0` or `crane push`.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	out := fs.String("out", "bin/images", "directory to write NAME.oci.tar into")
	version := fs.String("version", "v0.0.0-dev", "version stamped into the binaries and the image tag")
	commit := fs.String("commit", "unknown", "commit stamped into the binaries")
	epoch := fs.Int64("epoch", sourceDateEpoch(), "Unix time of every timestamp in the images (default $SOURCE_DATE_EPOCH, else 0)")
	repo := fs.String("repo", "ghcr.io/tetherproj", "registry and path the images are named under")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, spec := range Specs {
		b := Build{Spec: spec, Version: *version, Commit: *commit, Epoch: *epoch, Repository: *repo}
		res, err := b.Write(*out)
		if err != nil {
			return err
		}
		fmt.Printf("%s %s %d bytes (%s)\n", res.Path, res.Digest, res.Size, res.Ref)
	}
	return nil
}

// sourceDateEpoch is $SOURCE_DATE_EPOCH, or 0 when unset or not a number.
func sourceDateEpoch() int64 {
	n, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
