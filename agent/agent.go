package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/state"
	"github.com/tetherproj/tether/internal/version"
)

// Agent is one member cluster's agent. Build it with New; call Run once.
type Agent struct {
	log    hclog.Logger
	client *hubclient.Client
	member *Member
}

// New checks cfg, loads the local state (state.ErrCorrupt when a file
// does not parse) and builds the agent; it connects to nothing yet.
func New(cfg Config, logger hclog.Logger) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tlsCfg, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	store, err := state.Open(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	member := cfg.Member
	if member == nil {
		if member, err = kubeMember(cfg, logger); err != nil {
			return nil, err
		}
	}
	if cfg.AgentVersion == "" {
		cfg.AgentVersion = version.Version
	}
	client, err := hubclient.New(hubclient.Config{
		Addr:          cfg.HubAddr,
		TLS:           tlsCfg,
		AgentVersion:  cfg.AgentVersion,
		Store:         store,
		Applier:       member.Applier,
		Status:        member.Status,
		Capacity:      member.Capacity,
		OnSettings:    member.OnSettings,
		EvictionGrace: cfg.EvictionGrace,
		Backoff:       cfg.Backoff,
	}, logger)
	if err != nil {
		return nil, err
	}
	return &Agent{log: logger, client: client, member: member}, nil
}

// Run runs the member side (apply with drift repair, status, capacity) and
// the hub client until ctx ends, and returns once all have exited: nil,
// or why the agent cannot go on (hubclient.ErrClusterRemoved).
func (a *Agent) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(a.member.Runners)+1)
	var wg sync.WaitGroup
	for i, r := range a.member.Runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.Run(ctx)
			cancel() // one part ending ends the agent
		}()
	}
	a.log.Info("agent started", "version", version.Version)
	errs[len(errs)-1] = a.client.Run(ctx)
	cancel()
	wg.Wait()
	return filterCanceled(errs)
}

// filterCanceled drops context.Canceled from errs: parts ending because
// the agent stops are not errors.
func filterCanceled(errs []error) error {
	var out []error
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			out = append(out, err)
		}
	}
	return errors.Join(out...)
}
