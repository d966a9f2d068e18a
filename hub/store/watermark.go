package store

import "sync/atomic"

// Watermark is a store revision that only rises: the highest given to
// Raise so far. Safe for concurrent use; the zero value is 0.
type Watermark struct{ rev atomic.Int64 }

// Raise raises w to rev; a lower rev changes nothing.
func (w *Watermark) Raise(rev int64) {
	for {
		cur := w.rev.Load()
		if rev <= cur || w.rev.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// Load returns w.
func (w *Watermark) Load() int64 { return w.rev.Load() }
