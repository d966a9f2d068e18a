package tunnelconn

import (
	"sync"
	"time"
)

// deadlineTimer is a read deadline: expired returns a channel closed once
// the deadline has passed. Setting a new deadline replaces the channel.
type deadlineTimer struct {
	mu    sync.Mutex // guards all below
	timer *time.Timer
	ch    chan struct{}
	gen   uint64 // counts set calls: a timer of an older one closes nothing
	shut  bool   // ch is closed
}

func (d *deadlineTimer) init() { d.ch = make(chan struct{}) }

// set arms the deadline at t (zero: none), replacing the previous one.
func (d *deadlineTimer) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if d.shut { // expired: a new deadline needs a new channel
		d.ch, d.shut = make(chan struct{}), false
	}
	if t.IsZero() {
		return
	}
	gen := d.gen
	d.timer = time.AfterFunc(time.Until(t), func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.gen == gen && !d.shut {
			close(d.ch)
			d.shut = true
		}
	})
}

// expired is closed once the deadline passes.
func (d *deadlineTimer) expired() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ch
}
