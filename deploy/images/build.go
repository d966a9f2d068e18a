package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the uid and gid both images run as (distroless' "nonroot").
const User = "65532:65532"

// Spec is one image: which command it packs and where it keeps its data.
type Spec struct {
	// Name is the binary's and the image's name, e.g. tether-hub.
	Name string
	// Package is the Go package built, e.g. ./cmd/tether-hub.
	Package string
	// DataDir is created in the image owned by the user, so that the
	// binary starts even without a volume mounted there.
	DataDir string
}

// Specs are the images `make images` builds.
var Specs = []Spec{
	{Name: "tether-hub", Package: "./cmd/tether-hub", DataDir: "var/lib/tether"},
	{Name: "tether-agent", Package: "./cmd/tether-agent", DataDir: "var/lib/tether-agent"},
}

// Build is one image build.
type Build struct {
	Spec
	// Version and Commit are stamped into the binary (internal/version)
	// and Version is the image's tag.
	Version, Commit string
	// Epoch is the Unix time of every timestamp.
	Epoch int64
	// Repository prefixes the image's name in its reference annotation.
	Repository string
}

// Result is a written image.
type Result struct {
	Path   string  // the OCI layout tar file
	Ref    string  // REPOSITORY/NAME:VERSION, its org.opencontainers.image.ref.name
	Digest v1.Hash // the manifest's digest
	Size   int64   // the tar file's size in bytes
}

// Write builds the binary and the image and writes OUT/NAME.oci.tar.
func (b Build) Write(out string) (Result, error) {
	tmp, err := os.MkdirTemp("", "tether-image-")
	if err != nil {
		return Result{}, fmt.Errorf("create build directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, b.Name)
	if err := b.compile(bin); err != nil {
		return Result{}, err
	}
	img, err := b.Image(bin)
	if err != nil {
		return Result{}, err
	}
	return writeArchive(img, b.Ref(), filepath.Join(tmp, "layout"), filepath.Join(out, b.Name+".oci.tar"), b.Epoch)
}

// Ref is the image's reference.
func (b Build) Ref() string { return b.Repository + "/" + b.Name + ":" + b.Version }

// compile builds the static binary.
func (b Build) compile(out string) error {
	const module = "github.com/tetherproj/tether"
	ldflags := fmt.Sprintf("-s -w -buildid= -X %s/internal/version.Version=%s -X %s/internal/version.Commit=%s",
		module, b.Version, module, b.Commit)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, b.Package)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %w", b.Package, err)
	}
	return nil
}

// Image is the image of the binary at bin: one layer on an empty base.
func (b Build) Image(bin string) (v1.Image, error) {
	layer, err := b.layer(bin)
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{CreatedBy: "deploy/images: " + b.Package, Created: v1.Time{Time: b.created()}}})
	if err != nil {
		return nil, fmt.Errorf("add layer of %s: %w", b.Name, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read config of %s: %w", b.Name, err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Created = v1.Time{Time: b.created()}
	cfg.Config.Entrypoint = []string{"/usr/local/bin/" + b.Name}
	cfg.Config.User = User
	cfg.Config.WorkingDir = "/" + b.DataDir
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    b.Name,
		"org.opencontainers.image.version":  b.Version,
		"org.opencontainers.image.revision": b.Commit,
		"org.opencontainers.image.source":   "https://github.com/tetherproj/tether",
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("set config of %s: %w", b.Name, err)
	}
	return img, nil
}

func (b Build) created() time.Time { return time.Unix(b.Epoch, 0).UTC() }
