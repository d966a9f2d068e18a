package state

import (
	"context"
	"time"
)

// Backend keeps the state's named blobs: hub.json, digests.json and
// works/<sha256>.json. The directory backend (Open) keeps them as files;
// package agent/state/secret keeps them in a Kubernetes Secret.
// Implementations need not be safe for concurrent use: Store serializes
// its calls.
type Backend interface {
	// ReadAll returns every blob by name; none is an empty map. Leftovers
	// of writes that did not finish are not blobs.
	ReadAll(ctx context.Context) (map[string][]byte, error)
	// Write replaces the blob name with data, atomically: a later ReadAll
	// sees the old data or the new, never part of it. It may keep data:
	// Store never changes it after the call.
	Write(ctx context.Context, name string, data []byte) error
	// Delete removes the blob name; an unknown name is not an error.
	Delete(ctx context.Context, name string) error
	// Where names the blob for error messages: a path, or a Secret and key.
	Where(name string) string
}

// backendTimeout bounds one Backend call within the caller's context: long
// enough for an API server under load, short enough that a hung one does
// not hold the work it is written for for ever.
const backendTimeout = 30 * time.Second

// Blob names.
const (
	hubBlob     = hubFile
	digestsBlob = digestsFile
	worksPrefix = worksDir + "/"
)

// workBlob is the blob name of a work key.
func workBlob(key string) string { return worksPrefix + fileName(key) }
