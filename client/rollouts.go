package client

import (
	"context"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// RolloutStatus returns the rollout of a template a RolloutPolicy paces:
// its phase (and why when paused) and every cluster's. The error's code is
// NotFound when the template has no rollout.
func (c *Client) RolloutStatus(ctx context.Context, template *hubv1.ObjectRef) (*hubv1.RolloutStatus, error) {
	resp, err := c.rollouts.GetRollout(ctx, &hubv1.GetRolloutRequest{Template: template})
	if err != nil {
		return nil, c.Explain(err)
	}
	return resp.GetStatus(), nil
}

// PauseRollout stops the rollout admitting clusters.
func (c *Client) PauseRollout(ctx context.Context, template *hubv1.ObjectRef) (*hubv1.RolloutStatus, error) {
	resp, err := c.rollouts.PauseRollout(ctx, &hubv1.PauseRolloutRequest{Template: template})
	if err != nil {
		return nil, c.Explain(err)
	}
	return resp.GetStatus(), nil
}

// ResumeRollout lifts a pause, tolerating the failures so far.
func (c *Client) ResumeRollout(ctx context.Context, template *hubv1.ObjectRef) (*hubv1.RolloutStatus, error) {
	resp, err := c.rollouts.ResumeRollout(ctx, &hubv1.ResumeRolloutRequest{Template: template})
	if err != nil {
		return nil, c.Explain(err)
	}
	return resp.GetStatus(), nil
}

// UndoRollout applies the template's content at its previous revision,
// which the rollout then takes through its gates. The error's code is
// FailedPrecondition when the hub keeps no previous revision.
func (c *Client) UndoRollout(ctx context.Context, template *hubv1.ObjectRef) (*hubv1.RolloutStatus, error) {
	resp, err := c.rollouts.UndoRollout(ctx, &hubv1.UndoRolloutRequest{Template: template})
	if err != nil {
		return nil, c.Explain(err)
	}
	return resp.GetStatus(), nil
}
