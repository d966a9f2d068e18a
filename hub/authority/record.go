package authority

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// FileName is the record's file in the CA directory.
const FileName = "store-epoch.json"

// Record is what the hub keeps next to its CA about its store.
type Record struct {
	// Replica identifies this data directory's hub among replicas
	// sharing a store: its checkpoint key.
	Replica string `json:"replica"`
	// Epoch is the store epoch this hub trusts.
	Epoch string `json:"epoch"`
	// Revision is the highest store revision seen while authoritative.
	Revision int64 `json:"revision"`
	// Checkpoint is the last counter written to the store.
	Checkpoint int64 `json:"checkpoint"`
	// NotAuthoritative is why the hub is not, until an operator accepts
	// the store; empty while it is.
	NotAuthoritative string    `json:"notAuthoritative,omitempty"`
	Updated          time.Time `json:"updated"`
}

// readRecord reads dir's record; nil when there is none.
func readRecord(dir string) (*Record, error) {
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", FileName, err)
	}
	rec := &Record{}
	if err := json.Unmarshal(data, rec); err != nil {
		return nil, fmt.Errorf("decode %s: %w", filepath.Join(dir, FileName), err)
	}
	return rec, nil
}

// writeRecord replaces dir's record durably: written to a temporary file,
// synced, renamed, and the directory synced.
func writeRecord(dir string, rec Record) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, FileName+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", FileName, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", FileName, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", FileName, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", FileName, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, FileName)); err != nil {
		return fmt.Errorf("write %s: %w", FileName, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	return d.Sync()
}

// newReplicaID is a random id for a new record.
func newReplicaID() string {
	buf := make([]byte, 8)
	_, _ = rand.Read(buf) // never fails (crypto/rand)
	return hex.EncodeToString(buf)
}
