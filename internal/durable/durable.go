// Package durable writes the files that the hub and the agent keep on disk
// (CA, keys, certificates, admin.conf, the store record, agent state) so
// that a crash or a power loss leaves the old content or the new, whole:
//
//	err := durable.WriteFile(path, data, 0o600)  // replace path
//	err := durable.CreateFile(path, data, 0o600) // only if path does not exist
//
// Both write a temporary file in path's directory, fsync it, put it in
// place (rename, or a hard link that refuses an existing file) and fsync
// the directory, so that once they return the new file survives. On an
// error the temporary file is removed and path is as it was. SyncDir makes
// a caller's own rename or removal durable. It imports only the standard
// library.
package durable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// TempPrefix begins the name of every temporary file WriteFile and
// CreateFile make: a process that starts after a crash may remove the
// leftovers (filepath.Glob(filepath.Join(dir, TempPrefix+"*"))).
const TempPrefix = ".tmp-"

// Hooks a test replaces to see that files and directories are synced.
var (
	syncFile = (*os.File).Sync
	syncDir  = SyncDir
)

// WriteFile replaces path with data, with permissions mode.
func WriteFile(path string, data []byte, mode os.FileMode) error {
	tmp, err := writeTemp(path, data, mode)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // gone after the rename; removes it on an error
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// CreateFile writes data to path, with permissions mode, only if path does
// not exist; otherwise it returns an error that errors.Is os.ErrExist and
// leaves path alone. Of processes creating path at once, one wins.
func CreateFile(path string, data []byte, mode os.FileMode) error {
	tmp, err := writeTemp(path, data, mode)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	// A hard link puts the complete file in place and fails if path exists.
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create %s: %w", path, os.ErrExist)
		}
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := os.Remove(tmp); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// writeTemp writes data to a new synced file next to path and returns its
// name; on an error it leaves none.
func writeTemp(path string, data []byte, mode os.FileMode) (name string, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), TempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := syncFile(f); err != nil {
		return "", fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return f.Name(), nil
}

// SyncDir fsyncs dir, which makes a rename, link or removal in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
