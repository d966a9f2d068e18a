package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func baseRollout() *RolloutPolicy {
	one := intstr.FromInt32(1)
	return &RolloutPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: RolloutSpec{
			ResourceSelectors: []ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}},
			RolloutStrategy: RolloutStrategy{
				Type: RolloutProgressive,
				Progressive: &RolloutProgressiveParams{
					MaxConcurrency: &one,
					RolloutGates: RolloutGates{
						MinSuccessTime:          metav1.Duration{Duration: 20 * time.Second},
						ProgressDeadline:        "5m",
						MandatoryDecisionGroups: []MandatoryDecisionGroup{{GroupName: "canary"}},
					},
				},
				GroupBy: "tether.io/region",
			},
			Windows: []MaintenanceWindow{{
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "store"}},
				Schedule:        "0 2 * * *",
				Duration:        metav1.Duration{Duration: 3 * time.Hour},
			}},
		},
	}
}

func TestValidateRolloutPolicy(t *testing.T) {
	const prog = "spec.rolloutStrategy.progressive"
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	tests := []struct {
		name   string
		mutate func(*RolloutPolicy)
		want   []string
		detail string
	}{
		{"valid", func(*RolloutPolicy) {}, nil, ""},
		{"valid per group", func(p *RolloutPolicy) {
			s := &p.Spec.RolloutStrategy
			s.Type, s.ProgressivePerGroup = RolloutProgressivePerGroup, &RolloutProgressivePerGroupParams{s.Progressive.RolloutGates}
			s.Progressive = nil
		}, nil, ""},
		{"valid All, nothing else", func(p *RolloutPolicy) {
			p.Spec.RolloutStrategy = RolloutStrategy{}
			p.Spec.Windows = nil
		}, nil, ""},
		{"percentages", func(p *RolloutPolicy) {
			p.Spec.RolloutStrategy.Progressive.MaxConcurrency = pct("25%")
			p.Spec.RolloutStrategy.Progressive.MaxFailures = pct("0%")
		}, nil, ""},
		{"no selectors", func(p *RolloutPolicy) { p.Spec.ResourceSelectors = nil },
			[]string{"spec.resourceSelectors"}, "at least one resource selector"},
		{"selector in another namespace", func(p *RolloutPolicy) { p.Spec.ResourceSelectors[0].Namespace = "team-b" },
			[]string{"spec.resourceSelectors[0].namespace"}, ""},
		{"unknown type", func(p *RolloutPolicy) { p.Spec.RolloutStrategy.Type = "Canary" },
			[]string{"spec.rolloutStrategy.type", prog}, `supported values: "All", "Progressive", "ProgressivePerGroup"`},
		{"progressive block with type All", func(p *RolloutPolicy) { p.Spec.RolloutStrategy.Type = RolloutAll },
			[]string{prog, "spec.rolloutStrategy.groupBy"}, "applies to type Progressive, not All"},
		{"perGroup block with Progressive", func(p *RolloutPolicy) {
			p.Spec.RolloutStrategy.ProgressivePerGroup = &RolloutProgressivePerGroupParams{}
		}, []string{"spec.rolloutStrategy.progressivePerGroup"}, "applies to type ProgressivePerGroup"},
		{"groupBy not a label key", func(p *RolloutPolicy) { p.Spec.RolloutStrategy.GroupBy = "no spaces" },
			[]string{"spec.rolloutStrategy.groupBy"}, ""},
		{"maxConcurrency 0", func(p *RolloutPolicy) {
			v := intstr.FromInt32(0)
			p.Spec.RolloutStrategy.Progressive.MaxConcurrency = &v
		},
			[]string{prog + ".maxConcurrency"}, "must be at least 1"},
		{"maxConcurrency 0%", func(p *RolloutPolicy) { p.Spec.RolloutStrategy.Progressive.MaxConcurrency = pct("0%") },
			[]string{prog + ".maxConcurrency"}, "percentage from 1% to 100%"},
		{"maxConcurrency without %", func(p *RolloutPolicy) { p.Spec.RolloutStrategy.Progressive.MaxConcurrency = pct("3") },
			[]string{prog + ".maxConcurrency"}, ""},
		{"maxFailures over 100%", func(p *RolloutPolicy) { p.Spec.RolloutStrategy.Progressive.MaxFailures = pct("101%") },
			[]string{prog + ".maxFailures"}, ""},
		{"negative maxFailures", func(p *RolloutPolicy) { v := intstr.FromInt32(-1); p.Spec.RolloutStrategy.Progressive.MaxFailures = &v },
			[]string{prog + ".maxFailures"}, "must be at least 0"},
		{"negative minSuccessTime", func(p *RolloutPolicy) {
			p.Spec.RolloutStrategy.Progressive.MinSuccessTime.Duration = -time.Second
		}, []string{prog + ".minSuccessTime"}, ""},
		{"progressDeadline words", func(p *RolloutPolicy) { p.Spec.RolloutStrategy.Progressive.ProgressDeadline = "soon" },
			[]string{prog + ".progressDeadline"}, `must be "None" or a positive duration`},
		{"progressDeadline None", func(p *RolloutPolicy) { p.Spec.RolloutStrategy.Progressive.ProgressDeadline = "None" }, nil, ""},
		{"duplicate group", func(p *RolloutPolicy) {
			g := &p.Spec.RolloutStrategy.Progressive.MandatoryDecisionGroups
			*g = append(*g, MandatoryDecisionGroup{GroupName: "canary"})
		}, []string{prog + ".mandatoryDecisionGroups[1].groupName"}, "Duplicate"},
		{"empty group", func(p *RolloutPolicy) {
			p.Spec.RolloutStrategy.Progressive.MandatoryDecisionGroups[0].GroupName = ""
		}, []string{prog + ".mandatoryDecisionGroups[0].groupName"}, "Required"},
		{"window schedule", func(p *RolloutPolicy) { p.Spec.Windows[0].Schedule = "0 2 * *" },
			[]string{"spec.windows[0].schedule"}, "expected exactly 5 fields"},
		{"window with seconds field", func(p *RolloutPolicy) { p.Spec.Windows[0].Schedule = "0 0 2 * * *" },
			[]string{"spec.windows[0].schedule"}, ""},
		{"window without selector", func(p *RolloutPolicy) { p.Spec.Windows[0].ClusterSelector = nil },
			[]string{"spec.windows[0].clusterSelector"}, "Required"},
		{"window bad selector", func(p *RolloutPolicy) {
			p.Spec.Windows[0].ClusterSelector.MatchLabels = map[string]string{"tier": "a b"}
		}, []string{"spec.windows[0].clusterSelector.matchLabels"}, ""},
		{"window duration", func(p *RolloutPolicy) { p.Spec.Windows[0].Duration.Duration = 0 },
			[]string{"spec.windows[0].duration"}, "must be positive"},
		{"too many windows", func(p *RolloutPolicy) {
			p.Spec.Windows = make([]MaintenanceWindow, MaxRolloutWindows+1)
		}, []string{"spec.windows"}, "Too many"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := baseRollout()
			tt.mutate(p)
			assertErrors(t, tt.name, p.Validate(), tt.want, tt.detail)
			p.SetDefaults()
			assertErrors(t, tt.name+" (defaulted)", p.Validate(), tt.want, tt.detail)
		})
	}
}

func TestRolloutDefaults(t *testing.T) {
	p := baseRollout()
	p.Spec.RolloutStrategy = RolloutStrategy{}
	if g := p.Spec.RolloutStrategy.GroupLabel(); g != DefaultGroupLabel {
		t.Errorf("GroupLabel() = %q; want %q", g, DefaultGroupLabel)
	}
	p.SetDefaults()
	if p.Spec.RolloutStrategy.Type != RolloutAll || p.Spec.Priority == nil || *p.Spec.Priority != 0 {
		t.Errorf("SetDefaults: type %q priority %v; want All and 0", p.Spec.RolloutStrategy.Type, p.Spec.Priority)
	}
	if ns := p.Spec.ResourceSelectors[0].Namespace; ns != "default" {
		t.Errorf("selector namespace = %q; want the policy's, default", ns)
	}
	if g := p.Spec.RolloutStrategy.Gates(); g.MinSuccessTime.Duration != 0 || g.MaxFailures != nil {
		t.Errorf("Gates() of type All = %+v; want the zero gates", g)
	}
}
