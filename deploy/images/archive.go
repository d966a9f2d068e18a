package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// uid and gid of the image's user, owner of its data directory.
const uid, gid = 65532, 65532

// layer is the image's one layer: directories, the data directory and the
// binary, every entry dated Epoch, owned by root except the data directory.
func (b Build) layer(bin string) (v1.Layer, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("read binary: %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := b.created()
	dir := func(name string, mode int64, owner int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: owner, Gid: owner,
			ModTime: mtime, Format: tar.FormatPAX})
	}
	entries := []struct {
		name  string
		mode  int64
		owner int
	}{{"tmp", 0o1777, 0}, {"usr", 0o755, 0}, {"usr/local", 0o755, 0}, {"usr/local/bin", 0o755, 0}, {"var", 0o755, 0}, {"var/lib", 0o755, 0}}
	for _, e := range entries {
		if err := dir(e.name, e.mode, e.owner); err != nil {
			return nil, err
		}
	}
	if err := dir(b.DataDir, 0o700, uid); err != nil {
		return nil, err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "usr/local/bin/" + b.Name, Mode: 0o755,
		Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("write layer: %w", err)
	}
	layer, err := tarball.LayerFromReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("make layer: %w", err)
	}
	return layer, nil
}

// writeArchive writes img as an OCI image layout in dir, then dir as a tar
// file at path (sorted entries dated epoch, so that equal images give equal
// files).
func writeArchive(img v1.Image, ref, dir, path string, epoch int64) (Result, error) {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return Result{}, fmt.Errorf("create layout: %w", err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
		return Result{}, fmt.Errorf("write layout: %w", err)
	}
	digest, err := img.Digest()
	if err != nil {
		return Result{}, fmt.Errorf("digest image: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Result{}, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := tarDir(dir, path, time.Unix(epoch, 0).UTC()); err != nil {
		return Result{}, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return Result{}, err
	}
	return Result{Path: path, Ref: ref, Digest: digest, Size: st.Size()}, nil
}

// tarDir writes the regular files and directories under dir to a new tar
// file at path, sorted by name, every entry owned by root and dated mtime.
func tarDir(dir, path string, mtime time.Time) error {
	var names []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		names = append(names, p)
		return nil
	}); err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	sort.Strings(names)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	defer os.Remove(tmp)
	tw := tar.NewWriter(f)
	for _, p := range names {
		if err := addFile(tw, dir, p, mtime); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	return os.Rename(tmp, path)
}

func addFile(tw *tar.Writer, dir, p string, mtime time.Time) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	name := filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
	h := &tar.Header{Name: name, ModTime: mtime, Mode: 0o644, Typeflag: tar.TypeReg, Size: st.Size(), Format: tar.FormatPAX}
	if st.IsDir() {
		h.Typeflag, h.Name, h.Mode, h.Size = tar.TypeDir, name+"/", 0o755, 0
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if st.IsDir() {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
