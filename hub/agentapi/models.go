package agentapi

import (
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
// tetherctl cluster models), for following. It returns the models
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
