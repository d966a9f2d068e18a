package client

import (
	"context"
	"fmt"
	"iter"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// GetPlacement returns where a template runs: its clusters with their
// replicas, and the clusters the scheduler rejected with every reason.
// The error's code is NotFound when the template does not exist.
func (c *Client) GetPlacement(ctx context.Context, template *hubv1.ObjectRef) (*hubv1.Placement, error) {
	resp, err := c.Placements.GetPlacement(ctx, &hubv1.GetPlacementRequest{Template: template})
	if err != nil {
		return nil, c.Explain(err)
	}
	return resp.GetPlacement(), nil
}

// WatchPlacement yields a template's placement: with from 0 the current
// one first (ADDED), then the placement after each change (MODIFIED), or
// only those after revision from. Each message is the whole placement as
// the hub reads it when sending, so changes a slow reader has not taken
// yet arrive as one. A broken connection is resumed after the last
// placement yielded, without missing or repeating a change. The watch ends
// after the template's deletion (DELETED), when ctx ends (yielding ctx's
// error), or with an explained error.
func (c *Client) WatchPlacement(ctx context.Context, template *hubv1.ObjectRef, from int64) iter.Seq2[*hubv1.WatchPlacementResponse, error] {
	return follow(ctx, c, from, watch[*hubv1.WatchPlacementResponse]{
		open: func(ctx context.Context, from int64) (stream[*hubv1.WatchPlacementResponse], error) {
			return c.Placements.WatchPlacement(ctx, &hubv1.WatchPlacementRequest{Template: template, StartRevision: from})
		},
		revision: func(m *hubv1.WatchPlacementResponse) int64 { return m.GetPlacement().GetRevision() },
		last:     func(m *hubv1.WatchPlacementResponse) bool { return m.GetType() == hubv1.EventType_EVENT_TYPE_DELETED },
	})
}

// WaitPlaced waits until the scheduler has placed the template's current
// revision on at least one cluster, and returns that placement. A template
// no policy matches, or that fits no cluster, waits until ctx ends: the
// error then carries the placement's last message (and GetPlacement its
// rejections).
func (c *Client) WaitPlaced(ctx context.Context, template *hubv1.ObjectRef) (*hubv1.Placement, error) {
	var last *hubv1.Placement
	for m, err := range c.WatchPlacement(ctx, template, 0) {
		if err != nil {
			if last != nil && ctx.Err() != nil {
				return last, fmt.Errorf("%s not placed: %s: %w", RefString(template), waitingFor(last), err)
			}
			return last, err
		}
		last = m.GetPlacement()
		if m.GetType() == hubv1.EventType_EVENT_TYPE_DELETED {
			return last, fmt.Errorf("%s was deleted before it was placed", RefString(template))
		}
		if last.GetScheduled() && len(last.GetClusters()) > 0 {
			return last, nil
		}
	}
	return last, fmt.Errorf("%s: placement watch ended", RefString(template))
}

// waitingFor says why a placement is not there yet.
func waitingFor(p *hubv1.Placement) string {
	switch {
	case p.GetPolicy() == nil:
		return "no propagation policy matches it"
	case p.GetMessage() != "":
		return p.GetMessage()
	default:
		return fmt.Sprintf("not scheduled yet (%d clusters rejected)", len(p.GetRejections()))
	}
}

// Simulate schedules and renders template (one object, YAML or JSON) as if
// policies (propagation, override and interpreter customizations, YAML or
// JSON documents) were applied on top of the store, storing nothing. When
// an input is invalid it returns the response and a *RejectedError.
func (c *Client) Simulate(ctx context.Context, template []byte, policies ...[]byte) (*hubv1.SimulateResponse, error) {
	var pol []byte
	if len(policies) > 0 {
		pol = joinDocuments(policies)
	}
	resp, err := c.Placements.Simulate(ctx, &hubv1.SimulateRequest{Template: template, Policies: pol})
	if err != nil {
		return nil, c.Explain(err)
	}
	if rej := rejected(resp.GetInputs()); rej != nil {
		return resp, rej
	}
	return resp, nil
}
