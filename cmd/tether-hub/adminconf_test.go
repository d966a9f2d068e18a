package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminConfPrintsTheDataDirsFile: `tether-hub admin-conf` prints
// DATA_DIR/admin.conf byte for byte, and fails naming the file when the hub
// has not written it.
func TestAdminConfPrintsTheDataDirsFile(t *testing.T) {
	dir := t.TempDir()
	want := []byte("server: hub.example.com:7443\nca: x\n")
	if err := os.WriteFile(filepath.Join(dir, "admin.conf"), want, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"admin-conf", "--data-dir", dir}, &out, &errOut); code != 0 || !bytes.Equal(out.Bytes(), want) {
		t.Errorf("admin-conf = %d, %q (stderr %q); want 0 and the file", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"admin-conf", "--data-dir", t.TempDir()}, &out, &errOut); code != 1 ||
		out.Len() != 0 || !strings.Contains(errOut.String(), "admin.conf") {
		t.Errorf("admin-conf without the file = %d, %q, %q; want 1, nothing, an error naming admin.conf", code, out.String(), errOut.String())
	}
	if code := run(context.Background(), []string{"admin-conf"}, &out, &errOut); code != 2 {
		t.Errorf("admin-conf without --data-dir = %d; want 2", code)
	}
}
