package client

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Delays between attempts to resume a broken watch: doubled after each
// failed attempt from resumeFirstDelay up to resumeMaxDelay, back to the
// first after a message arrives.
const (
	resumeFirstDelay = 100 * time.Millisecond
	resumeMaxDelay   = 5 * time.Second
)

// stream is one opened server stream: Recv as the generated clients have it.
type stream[T any] interface {
	Recv() (T, error)
}

// watch describes one resumable watch to follow.
type watch[T any] struct {
	// open opens a stream of the messages after revision from.
	open func(ctx context.Context, from int64) (stream[T], error)
	// revision is the revision to resume after once m was delivered.
	revision func(m T) int64
	// last reports whether m ends the watch (a deleted template).
	last func(m T) bool
}

// follow yields the messages of w from revision from on. When a stream
// breaks (the connection was lost, the hub restarted: Unavailable, or the
// stream ended) it opens the next from the revision of the last message
// yielded, so that nothing is missed or repeated, retrying until ctx ends.
// A watch that could never open a stream, or has nothing to resume from
// (from 0 and nothing yielded yet), ends with the error instead, as does
// every other error (compaction: OutOfRange, a missing role...),
// explained.
func follow[T any](ctx context.Context, c *Client, from int64, w watch[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		delay, opened := resumeFirstDelay, false
		for {
			err := runStream(ctx, from, w, &opened, func(m T) bool {
				from, delay = w.revision(m), resumeFirstDelay
				return yield(m, nil)
			})
			switch {
			case err == nil:
				return // the consumer stopped or the watch ended
			case ctx.Err() != nil:
				yield(zero, ctx.Err())
				return
			case !resumable(err) || from == 0 || !opened:
				yield(zero, c.Explain(err))
				return
			}
			select {
			case <-ctx.Done():
				yield(zero, ctx.Err())
				return
			case <-time.After(delay):
			}
			delay = min(2*delay, resumeMaxDelay)
		}
	}
}

// runStream opens one stream from revision from and delivers its messages
// until it breaks (the error), deliver says stop, or a last message came
// (nil). opened is set once a stream was opened.
func runStream[T any](ctx context.Context, from int64, w watch[T], opened *bool, deliver func(T) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := w.open(ctx, from)
	if err != nil {
		return err
	}
	*opened = true
	for {
		m, err := s.Recv()
		if err != nil {
			return err
		}
		if !deliver(m) || w.last(m) {
			return nil
		}
	}
}

// resumable reports whether a watch broken by err may be opened again.
func resumable(err error) bool {
	return errors.Is(err, io.EOF) || status.Code(err) == codes.Unavailable
}
