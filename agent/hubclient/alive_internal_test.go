package hubclient

import (
	"context"
	"testing"
	"time"
)

// TestAlive: Alive fails while the client's lock is held past its
// context, and succeeds once it is free.
func TestAlive(t *testing.T) {
	c := &Client{}
	c.mu.Lock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	err := c.Alive(ctx)
	cancel()
	c.mu.Unlock() // the waiting goroutine takes it and ends
	if err == nil {
		t.Fatal("Alive() with the lock held = nil; want an error")
	}
	if err := c.Alive(context.Background()); err != nil {
		t.Errorf("Alive() with the lock free = %v; want nil", err)
	}
}
