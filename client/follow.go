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
// breaks with a Retryable error (the connection was lost, the hub
// restarted, the stream ended) it opens the next from the revision of the
// last message yielded, so that nothing is missed or repeated, retrying
// until ctx ends.
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
			case !Retryable(err) || from == 0 || !opened:
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

// Retryable reports whether a call or watch that failed with err may be
// made again as it was (a watch from the last revision it delivered): the
// stream ended (io.EOF), the hub was unreachable or restarting
// (Unavailable), the hub's own watch of its store broke (Internal), or a
// concurrent change got in the way (Aborted). It is the one set of codes
// the client and tetherctl retry on; errors explained by this package keep
// their code.
func Retryable(err error) bool {
	if errors.Is(err, io.EOF) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Internal, codes.Aborted:
		return true
	}
	return false
}

// Restartable reports whether a watch that ended with err can be started
// over from a fresh read (a List and a Watch from its revision, or a
// placement watch from 0): it is Retryable, or the revision it would
// resume from was compacted (OutOfRange).
func Restartable(err error) bool {
	return Retryable(err) || status.Code(err) == codes.OutOfRange
}
