package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

func TestFollowListsAgainAfterCompactionAndStopsWithCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls []time.Time
	err := Follow(ctx, hclog.NewNullLogger(), time.Hour, func(context.Context) error {
		calls = append(calls, time.Now())
		if len(calls) < 3 {
			return fmt.Errorf("watch: %w", ErrCompacted)
		}
		cancel()
		return errors.New("watch ended")
	})
	if err != nil || len(calls) != 3 {
		t.Fatalf("Follow = %v after %d sessions; want nil after 3 (two compactions, then ctx ended)", err, len(calls))
	}
	if gap := calls[2].Sub(calls[0]); gap > time.Second {
		t.Errorf("sessions after compaction started %s apart; want at once, not after the hour's backoff", gap)
	}
}

func TestFollowBacksOffOnOtherErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	calls := 0
	err := Follow(ctx, hclog.NewNullLogger(), time.Hour, func(context.Context) error {
		calls++
		return errors.New("etcd unavailable")
	})
	if err != nil || calls != 1 {
		t.Errorf("Follow = %v after %d sessions; want nil after 1 (the backoff outlasts ctx)", err, calls)
	}
}
