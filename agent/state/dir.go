package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// dirBackend keeps the blobs as files under <data-dir>/state, the blob
// name being the path below it.
type dirBackend struct {
	dir string // <data-dir>/state
}

func (d dirBackend) Where(name string) string { return filepath.Join(d.dir, filepath.FromSlash(name)) }

// ReadAll reads hub.json, digests.json, customizations.json and
// works/*.json, removing the temporary files of writes that did not
// finish.
func (d dirBackend) ReadAll(context.Context) (map[string][]byte, error) {
	removeTemps(d.dir)
	blobs := map[string][]byte{}
	for _, name := range []string{hubBlob, digestsBlob, customizationsBlob} {
		if err := d.readInto(blobs, name); err != nil {
			return nil, err
		}
	}
	dir := filepath.Join(d.dir, worksDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("state: read %s: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			_ = os.Remove(filepath.Join(dir, e.Name())) // left by a write that did not finish
			continue
		}
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if err := d.readInto(blobs, worksPrefix+e.Name()); err != nil {
			return nil, err
		}
	}
	return blobs, nil
}

// readInto adds the file of name to blobs; a missing file is skipped.
func (d dirBackend) readInto(blobs map[string][]byte, name string) error {
	path := d.Where(name)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state: read %s: %w", path, err)
	}
	blobs[name] = data
	return nil
}

func (d dirBackend) Write(_ context.Context, name string, data []byte) error {
	path := d.Where(name)
	if err := writeAtomic(path, data); err != nil {
		return fmt.Errorf("state: write %s: %w", path, err)
	}
	return nil
}

func (d dirBackend) Delete(_ context.Context, name string) error {
	path := d.Where(name)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state: remove %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// removeTemps removes the temporary files of writes that did not finish.
func removeTemps(dir string) {
	temps, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	for _, t := range temps {
		_ = os.Remove(t)
	}
}
