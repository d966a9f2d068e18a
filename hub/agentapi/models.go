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

// nextModels reads the cluster's resource models again and sends the
// agent new Settings when they differ from sent (an admin set them:
// tetherctl cluster models), for followSettings. It returns the models
// the agent now has and the channel closed when they may change again.
// The agent grades its nodes by them at once and heartbeats the counts,
// which the scheduler's estimator reads.
func (s *Server) nextModels(st *stream, sent []*agentv1.ResourceModel) ([]*agentv1.ResourceModel, <-chan struct{}) {
	models, changed := s.resourceModels(st.cluster)
	if slices.EqualFunc(models, sent, func(a, b *agentv1.ResourceModel) bool { return proto.Equal(a, b) }) {
		return sent, changed
	}
	st.log.Info("sending new resource models", "grades", len(models))
	st.reply(&agentv1.HubMessage{Message: &agentv1.HubMessage_Settings{Settings: s.cfg.settings(models)}})
	return models, changed
}

// followSettings sends the agent its cluster's new resource models
// (nextModels) and every newer customizations set (nextCustomizations) as
// they change, until ctx ends. sent are the models Welcome carried; cs is
// what start sent of the customizations. One goroutine per stream follows
// both: an idle stream's goroutines are most of its memory.
func (s *Server) followSettings(ctx context.Context, st *stream, sent []*agentv1.ResourceModel, modelsChanged <-chan struct{}, cs customState) {
	var customChanged <-chan struct{} // nil without a source: never ready
	if s.cfg.Customizations != nil {
		set, _ := s.cfg.Customizations.Customizations()
		warnUnsupported(st, cs, set)
		customChanged = cs.changed
	}
	for {
		select {
		case <-modelsChanged:
			sent, modelsChanged = s.nextModels(st, sent)
		case <-customChanged:
			s.nextCustomizations(st, &cs)
			customChanged = cs.changed
		case <-ctx.Done():
			return
		}
	}
}
