package hub

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Hub is one tether-hub process.
type Hub struct {
	cfg    Config
	logger hclog.Logger
	// servingRenewAfter, set by tests, replaces hub/serving's choice of
	// when to re-issue the serving certificate.
	servingRenewAfter func(life time.Duration) time.Duration
	// storeProbe, set by tests, replaces the store's Reachable as the
	// store watch's probe (hub/storewatch).
	storeProbe func(ctx context.Context) error
}

// New checks cfg and returns the hub; nothing starts before Run.
func New(cfg Config, logger hclog.Logger) (*Hub, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("hub config: %w", err)
	}
	return &Hub{cfg: cfg, logger: logger}, nil
}

// Run is the whole hub: it opens the store and the CA and binds the ports
// (open.go), builds every part over them (wire.go), runs the table of
// tasks (tasks.go), announces itself, and returns once ctx ends and every
// task has stopped, or when one of them fails (which stops the others).
func (h *Hub) Run(ctx context.Context) error {
	b, err := h.open(ctx)
	if err != nil {
		return err
	}
	defer b.close()
	p, err := h.wire(b)
	if err != nil {
		return err
	}
	defer p.close()
	g := newGroup(ctx, h.logger, p.counts)
	start(g, p.tasks, p.elector)
	p.srv.setReady(true) // before hub.addr exists: whoever read it finds the hub ready
	if err := h.announce(b.ca, b.addr(), b.identity); err != nil {
		g.fail(err)
	}
	err = g.wait()
	p.srv.setReady(false)
	_ = os.Remove(h.cfg.path(AddrFile))
	h.logger.Info("hub stopped")
	return err
}

// replicaName names this replica in etcd (leader key, liveness records)
// for operators: host name and listen address.
func replicaName(addr string) string {
	host, err := os.Hostname()
	if err != nil {
		return addr
	}
	return host + "/" + addr
}
