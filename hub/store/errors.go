package store

import (
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinel errors; callers test them with errors.Is.
var (
	ErrNotFound  = errors.New("store: not found")
	ErrExists    = errors.New("store: already exists")
	ErrConflict  = errors.New("store: revision conflict")
	ErrCompacted = errors.New("store: revision compacted")
	ErrTooLarge  = errors.New("store: value too large")
	// ErrNotLeader: a write through a fenced view (Store.Fenced) whose
	// leadership is released or lost; nothing was written.
	ErrNotLeader = errors.New("store: not the leader, write fenced")
)

// wrap maps an etcd client error to the package's errors, with the key.
func wrap(op, key string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%s %s: %w", op, key, ErrCompacted)
	case errors.Is(err, rpctypes.ErrRequestTooLarge), status.Code(err) == codes.ResourceExhausted:
		return fmt.Errorf("%s %s: %w", op, key, ErrTooLarge)
	default:
		return fmt.Errorf("%s %s: %w", op, key, err)
	}
}
