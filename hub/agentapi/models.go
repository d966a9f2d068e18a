package agentapi

import (
	"context"
	"slices"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// resourceModels reads cluster's resource models and the channel closed
// when they may change; nil, nil without a source (never closed).
func (s *Server) resourceModels(cluster string) ([]*agentv1.ResourceModel, <-chan struct{}) {
	if s.cfg.ResourceModels == nil {
		return nil, nil
	}
	return s.cfg.ResourceModels.ResourceModels(cluster)
}

// followModels sends the agent new Settings whenever its cluster's
// resource models change (an admin set them: tetherctl cluster models),
// until ctx ends. sent are the models Welcome carried. The agent grades
// its nodes by them at once and heartbeats the counts, which the
// scheduler's estimator reads.
func (s *Server) followModels(ctx context.Context, st *stream, sent []*agentv1.ResourceModel, changed <-chan struct{}) {
	for {
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
		var models []*agentv1.ResourceModel
		models, changed = s.resourceModels(st.cluster)
		if slices.EqualFunc(models, sent, func(a, b *agentv1.ResourceModel) bool { return proto.Equal(a, b) }) {
			continue
		}
		st.log.Info("sending new resource models", "grades", len(models))
		st.reply(&agentv1.HubMessage{Message: &agentv1.HubMessage_Settings{Settings: s.cfg.settings(models)}})
		sent = models
	}
}
