package client

import (
	"context"

	"google.golang.org/grpc"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// RolloutStatus returns the rollout of a template a RolloutPolicy paces:
// its phase (and why when paused) and every cluster's. The error's code is
// NotFound when the template has no rollout.
func (c *Client) RolloutStatus(ctx context.Context, template *hubv1.ObjectRef) (*hubv1.RolloutStatus, error) {
	return c.rollout(ctx, c.rollouts.Status, template)
}

// PauseRollout stops the rollout admitting clusters.
func (c *Client) PauseRollout(ctx context.Context, template *hubv1.ObjectRef) (*hubv1.RolloutStatus, error) {
	return c.rollout(ctx, c.rollouts.Pause, template)
}

// ResumeRollout lifts a pause, tolerating the failures so far.
func (c *Client) ResumeRollout(ctx context.Context, template *hubv1.ObjectRef) (*hubv1.RolloutStatus, error) {
	return c.rollout(ctx, c.rollouts.Resume, template)
}

// UndoRollout applies the template's content at its previous revision,
// which the rollout then takes through its gates. The error's code is
// FailedPrecondition when the hub keeps no previous revision.
func (c *Client) UndoRollout(ctx context.Context, template *hubv1.ObjectRef) (*hubv1.RolloutStatus, error) {
	return c.rollout(ctx, c.rollouts.Undo, template)
}

type rolloutCall = func(context.Context, *hubv1.RolloutRequest, ...grpc.CallOption) (*hubv1.RolloutResponse, error)

func (c *Client) rollout(ctx context.Context, call rolloutCall, template *hubv1.ObjectRef) (*hubv1.RolloutStatus, error) {
	resp, err := call(ctx, &hubv1.RolloutRequest{Template: template})
	if err != nil {
		return nil, c.Explain(err)
	}
	return resp.GetStatus(), nil
}
