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
// tetherctl cluster models), for settingsFollow. It returns the models
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

// settingsFollow is what a started stream follows of its settings: the
// resource models and customizations its agent was sent and the channels
// closed when they may change (nil: never). The stream's send loop waits
// on them with its own (sendLoop) rather than a goroutine of their own:
// an idle stream's goroutines are most of what it costs the hub (each
// some 6 KiB of stack; 60 MB for 10,000 agents).
type settingsFollow struct {
	s             *Server
	models        []*agentv1.ResourceModel
	modelsChanged <-chan struct{}
	custom        customState
	customChanged <-chan struct{}
}

// followSettings starts following the stream's settings from the models
// Welcome carried and what start sent of the customizations.
func (s *Server) followSettings(st *stream, models []*agentv1.ResourceModel, modelsChanged <-chan struct{}, cs customState) *settingsFollow {
	f := &settingsFollow{s: s, models: models, modelsChanged: modelsChanged, custom: cs}
	if s.cfg.Customizations != nil {
		set, _ := s.cfg.Customizations.Customizations()
		warnUnsupported(st, cs, set)
		f.customChanged = cs.changed
	}
	return f
}

// nextModels sends the agent its cluster's new resource models, if they
// changed (Server.nextModels).
func (f *settingsFollow) nextModels(st *stream) {
	f.models, f.modelsChanged = f.s.nextModels(st, f.models)
}

// nextCustomizations sends the agent a newer customizations set
// (Server.nextCustomizations).
func (f *settingsFollow) nextCustomizations(st *stream) {
	f.s.nextCustomizations(st, &f.custom)
	f.customChanged = f.custom.changed
}
