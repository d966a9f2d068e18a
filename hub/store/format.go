package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// The store's format: the layout and value encodings of the keys in the
// package documentation, as one number recorded at FormatKey. Additive
// changes (a new key prefix, a new optional JSON field) keep the number,
// because a replica of the previous version ignores what it does not know;
// a change that an older replica would misread raises it.
//
// A replica reads every format from FormatOldest to Format. During a
// rolling upgrade the replicas of two adjacent versions share one store, so
// a version that raises Format must keep FormatOldest at the previous
// version's Format (and write what that version reads) until the next
// version: one version reads the old and the new, the version after it
// may drop the old.
const (
	Format       = 1
	FormatOldest = 1
)

// FormatKey holds the store's format number, written by the first replica
// that starts on a store that has none.
const FormatKey = Root + "meta/format"

// ErrFormat is returned by CheckFormat when this binary cannot read the
// store's format.
var ErrFormat = errors.New("store format not readable by this version")

// CheckFormat records Format on a store that has no format yet (new, or
// written by a version from before formats were recorded, which wrote
// format 1) and refuses (ErrFormat) a store whose format this binary does
// not read: one written by a newer version beyond the adjacent one, or one
// older than FormatOldest. It returns the store's format.
func (s *Store) CheckFormat(ctx context.Context) (int, error) {
	kv, err := s.Get(ctx, FormatKey)
	if errors.Is(err, ErrNotFound) {
		if _, err = s.Create(ctx, FormatKey, []byte(strconv.Itoa(Format))); err != nil && !errors.Is(err, ErrExists) {
			return 0, err
		}
		kv, err = s.Get(ctx, FormatKey) // another replica may have won the race
	}
	if err != nil {
		return 0, err
	}
	return checkFormat(string(kv.Value))
}

// checkFormat tells whether a binary reading FormatOldest..Format reads
// the recorded format value.
func checkFormat(value string) (int, error) {
	f, err := strconv.Atoi(value)
	if err != nil || f < 1 {
		return 0, fmt.Errorf("%w: %s holds %q, not a format number", ErrFormat, FormatKey, value)
	}
	switch {
	case f > Format:
		return f, fmt.Errorf("%w: the store has format %d, written by a newer tether-hub; this one reads formats %d to %d: "+
			"run the newer version (replicas share a store only with the adjacent version)", ErrFormat, f, FormatOldest, Format)
	case f < FormatOldest:
		return f, fmt.Errorf("%w: the store has format %d; this tether-hub reads formats %d to %d: "+
			"upgrade through the intermediate versions, one at a time", ErrFormat, f, FormatOldest, Format)
	}
	return f, nil
}
