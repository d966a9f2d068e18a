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

	"github.com/tetherproj/tether/internal/durable"
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

// writeRecord replaces dir's record durably (durable.WriteFile).
func writeRecord(dir string, rec Record) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(filepath.Join(dir, FileName), append(data, '\n'), 0o600)
}

// newReplicaID is a random id for a new record.
func newReplicaID() string {
	buf := make([]byte, 8)
	_, _ = rand.Read(buf) // never fails (crypto/rand)
	return hex.EncodeToString(buf)
}
