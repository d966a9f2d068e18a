//go:build imagestest

// The images test builds both binaries with CGO_ENABLED=0 -trimpath. `make
// build` uses the same flags, so under make (`make test`, `make charts-test`,
// both -tags imagestest) it only links; a plain `go test ./...` (cgo on by
// default) would compile everything again, so the tag keeps it out of that.

package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// maxImageBytes bounds each OCI tar file: the stripped static binaries
// compress to under 20 MiB; 40 MiB would mean something else got in.
const maxImageBytes = 40 << 20

// TestImages builds both images twice from the repository and checks what a
// registry and a kubelet would read: one layer, the binary as entrypoint,
// user 65532, linux/amd64, the epoch as creation time, a bounded size, and
// one digest for both builds.
func TestImages(t *testing.T) {
	if err := os.Chdir("../.."); err != nil { // the repository root, for ./cmd/...
		t.Fatal(err)
	}
	const epoch = 1700000000
	for _, spec := range Specs {
		t.Run(spec.Name, func(t *testing.T) {
			b := Build{Spec: spec, Version: "v9.9.9", Commit: "abc1234", Epoch: epoch, Repository: "example.com/tether"}
			first, err := b.Write(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			second, err := b.Write(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if first.Digest != second.Digest {
				t.Errorf("two builds: digests %s and %s; want one", first.Digest, second.Digest)
			}
			if first.Size > maxImageBytes {
				t.Errorf("%s is %d bytes; want at most %d", first.Path, first.Size, maxImageBytes)
			}
			t.Logf("%s: %d bytes, %s", spec.Name, first.Size, first.Digest)
			checkImage(t, spec, readImage(t, first.Path, first.Digest), epoch)
		})
	}
}

// readImage unpacks the OCI tar file and reads its one image back.
func readImage(t *testing.T, path string, digest v1.Hash) v1.Image {
	t.Helper()
	dir := t.TempDir()
	untar(t, path, dir)
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Digest != digest {
		t.Fatalf("index.json manifests = %v; want one, %s", m.Manifests, digest)
	}
	if ref := m.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; !strings.HasPrefix(ref, "example.com/tether/tether-") {
		t.Errorf("ref.name = %q", ref)
	}
	img, err := p.Image(digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func checkImage(t *testing.T, spec Spec, img v1.Image, epoch int64) {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(cfg.Config.Entrypoint, " "), "/usr/local/bin/"+spec.Name; got != want {
		t.Errorf("entrypoint %q; want %q", got, want)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q; want 65532:65532", cfg.Config.User)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" || cfg.Created.Unix() != epoch {
		t.Errorf("os/arch/created = %s/%s/%v; want linux/amd64/%d", cfg.OS, cfg.Architecture, cfg.Created, epoch)
	}
	mt, err := img.MediaType()
	if err != nil || !strings.Contains(string(mt), "oci") {
		t.Errorf("manifest media type %q (%v); want OCI", mt, err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers; want 1 (no base image)", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = h
		if h.Name == "usr/local/bin/"+spec.Name {
			checkStatic(t, tr)
		}
		if h.ModTime.Unix() != epoch {
			t.Errorf("%s dated %v; want the epoch", h.Name, h.ModTime)
		}
	}
	bin := files["usr/local/bin/"+spec.Name]
	if bin == nil || bin.Mode&0o111 == 0 || bin.Size == 0 {
		t.Errorf("binary entry %+v; want an executable file", bin)
	}
	if d := files[spec.DataDir]; d == nil || d.Uid != 65532 {
		t.Errorf("data directory %s entry %+v; want one owned by 65532", spec.DataDir, d)
	}
	if len(files) != 8 {
		t.Errorf("layer has %d entries; want 8 (the binary, its data directory and 6 directories)", len(files))
	}
}

// checkStatic: the binary is a linux/amd64 ELF executable with no
// interpreter and no dynamic section, so it needs nothing from the image.
func checkStatic(t *testing.T, r io.Reader) {
	t.Helper()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("binary: %v", err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 || f.Type != elf.ET_EXEC {
		t.Errorf("binary is %v %v; want an x86-64 executable", f.Machine, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("binary has a %v program header; want a static binary", p.Type)
		}
	}
}

func untar(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
