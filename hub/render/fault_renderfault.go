//go:build renderfault

package render

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"time"
)

// init makes every render of the key PanicKeyEnv names panic, every
// apply of a stored object whose key ends with ApplyPanicKeyEnv's value
// panic, and the renderer wait while the file HoldFileEnv names exists.
// Only a hub built with -tags renderfault has this file: the fault
// suite's.
func init() {
	if k := os.Getenv(PanicKeyEnv); k != "" {
		renderFault = func(key string) {
			if key == k {
				panic("renderfault: the render of " + key + " panics (" + PanicKeyEnv + ")")
			}
		}
	}
	if k := os.Getenv(ApplyPanicKeyEnv); k != "" {
		applyFault = func(storeKey string) {
			if strings.HasSuffix(storeKey, k) {
				panic("renderfault: applying " + storeKey + " panics (" + ApplyPanicKeyEnv + ")")
			}
		}
	}
	if f := os.Getenv(HoldFileEnv); f != "" {
		holdFault = func(ctx context.Context) { holdWhile(ctx, f) }
	}
}

// holdWhile returns once the file at path is gone or ctx ends.
func holdWhile(ctx context.Context, path string) {
	for {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
