package state

import (
	"fmt"

	"github.com/tetherproj/tether/internal/durable"
)

// writeAtomic stores data at path durably, readable by its owner only
// (durable.WriteFile: a temporary file named tempPrefix..., fsync, rename
// over path, fsync of the directory).
func writeAtomic(path string, data []byte) error {
	return durable.WriteFile(path, data, 0o600)
}

// syncDir makes a rename or removal in dir durable.
func syncDir(dir string) error {
	if err := durable.SyncDir(dir); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}
