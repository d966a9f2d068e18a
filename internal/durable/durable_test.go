package durable

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// spy records what the hooks sync and fails the syncs the test asks for.
type spy struct {
	files, dirs       []string
	failFile, failDir error
}

func (s *spy) install(t *testing.T) {
	t.Helper()
	syncFile = func(f *os.File) error {
		data, err := os.ReadFile(f.Name())
		if err != nil {
			t.Errorf("ReadFile(%s) at its sync: %v", f.Name(), err)
		}
		s.files = append(s.files, string(data))
		if s.failFile != nil {
			return s.failFile
		}
		return f.Sync()
	}
	syncDir = func(dir string) error {
		s.dirs = append(s.dirs, dir)
		if s.failDir != nil {
			return s.failDir
		}
		return SyncDir(dir)
	}
	t.Cleanup(func() { syncFile, syncDir = (*os.File).Sync, SyncDir })
}

// leftovers are the temporary files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	temps, err := filepath.Glob(filepath.Join(dir, TempPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return temps
}

func wantFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != data {
		t.Errorf("ReadFile(%s) = %q, %v; want %q", path, got, err, data)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != mode {
		t.Errorf("Stat(%s) = %v, %v; want mode %v", path, info, err, mode)
	}
}

var writers = []struct {
	name  string
	write func(path string, data []byte, mode os.FileMode) error
}{
	{"WriteFile", WriteFile},
	{"CreateFile", CreateFile},
}

// TestWritesSyncFileThenDirectory: the whole content is synced before it
// is put in place, and then its directory is synced.
func TestWritesSyncFileThenDirectory(t *testing.T) {
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			var s spy
			s.install(t)
			dir := t.TempDir()
			path := filepath.Join(dir, "ca.key")
			if err := w.write(path, []byte("secret"), 0o600); err != nil {
				t.Fatalf("%s(%s) = %v", w.name, path, err)
			}
			if len(s.files) != 1 || s.files[0] != "secret" {
				t.Errorf("%s synced files holding %q; want one holding %q", w.name, s.files, "secret")
			}
			if len(s.dirs) != 1 || s.dirs[0] != dir {
				t.Errorf("%s synced directories %v; want [%s]", w.name, s.dirs, dir)
			}
			wantFile(t, path, "secret", 0o600)
			if temps := leftovers(t, dir); len(temps) != 0 {
				t.Errorf("%s left temporary files %v", w.name, temps)
			}
		})
	}
}

// TestFailedSyncLeavesOldFileAndNoTemp: a write whose file sync fails
// returns the error, keeps the old content and leaves no temporary file.
func TestFailedSyncLeavesOldFileAndNoTemp(t *testing.T) {
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			failed := errors.New("disk gone")
			s := spy{failFile: failed}
			s.install(t)
			dir := t.TempDir()
			path := filepath.Join(dir, "admin.conf")
			if w.name == "WriteFile" {
				if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := w.write(path, []byte("new"), 0o600)
			if !errors.Is(err, failed) {
				t.Errorf("%s with a failing sync = %v; want %v", w.name, err, failed)
			}
			if w.name == "WriteFile" {
				wantFile(t, path, "old", 0o600)
			} else if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Stat(%s) after a failed CreateFile = %v; want it absent", path, err)
			}
			if temps := leftovers(t, dir); len(temps) != 0 {
				t.Errorf("%s left temporary files %v", w.name, temps)
			}
		})
	}
}

// TestFailedDirSyncIsAnError: the file is in place, but the caller learns
// that it may not survive a power loss.
func TestFailedDirSyncIsAnError(t *testing.T) {
	failed := errors.New("dir sync")
	s := spy{failDir: failed}
	s.install(t)
	path := filepath.Join(t.TempDir(), "ca.crt")
	if err := WriteFile(path, []byte("cert"), 0o644); !errors.Is(err, failed) {
		t.Errorf("WriteFile with a failing directory sync = %v; want %v", err, failed)
	}
}

// TestWriteFileReplaces: WriteFile replaces content and mode.
func TestWriteFileReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "addr")
	if err := os.WriteFile(path, []byte("a longer old content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatalf("WriteFile(%s) = %v", path, err)
	}
	wantFile(t, path, "new", 0o600)
}

// TestCreateFileKeepsExisting: CreateFile refuses an existing file with
// os.ErrExist, leaves it as it was and leaves no temporary file.
func TestCreateFileKeepsExisting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "admin.conf")
	if err := os.WriteFile(path, []byte("edited by the user"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CreateFile(path, []byte("new"), 0o600); !errors.Is(err, os.ErrExist) {
		t.Errorf("CreateFile(existing %s) = %v; want os.ErrExist", path, err)
	}
	wantFile(t, path, "edited by the user", 0o600)
	if temps := leftovers(t, dir); len(temps) != 0 {
		t.Errorf("CreateFile left temporary files %v", temps)
	}
}

// TestRenameFailureLeavesNoTemp: a path that cannot be replaced (a
// directory) is an error naming it, and no temporary file stays.
func TestRenameFailureLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pki")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("data"), 0o600); err == nil {
		t.Errorf("WriteFile(directory %s) = nil; want an error", path)
	}
	if temps := leftovers(t, dir); len(temps) != 0 {
		t.Errorf("WriteFile left temporary files %v", temps)
	}
}

// TestMissingDirectory: an error naming the path, nothing created.
func TestMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent", "ca.crt")
	if err := WriteFile(path, []byte("x"), 0o600); err == nil {
		t.Errorf("WriteFile(%s) = nil; want an error", path)
	}
}
