package v1alpha1

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateRefusesUnsupported(t *testing.T) {
	clusterFailover := func(mode PurgeMode) *FailoverBehavior {
		return &FailoverBehavior{Cluster: &ClusterFailoverBehavior{PurgeMode: mode}}
	}
	tests := []struct {
		name   string
		mutate func(*PropagationPolicy)
		want   []string // paths of the expected errors, in order
		detail string   // a substring of the first error, if set
	}{
		{"cluster failover, gracefully by default", func(p *PropagationPolicy) { p.Spec.Failover = clusterFailover("") }, nil, ""},
		{"cluster failover gracefully", func(p *PropagationPolicy) { p.Spec.Failover = clusterFailover(PurgeModeGracefully) }, nil, ""},
		{"the default scheduler by name", func(p *PropagationPolicy) { p.Spec.SchedulerName = DefaultSchedulerName }, nil, ""},
		{"application failover", func(p *PropagationPolicy) {
			p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover(PurgeModeGracefully, ptr[int32](60))
			p.Spec.Failover.Application.DecisionConditions.TolerationSeconds = ptr[int32](30)
		}, nil, ""},
		{"application failover with its defaults", func(p *PropagationPolicy) {
			p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover("", nil)
		}, nil, ""},
		{"application failover purging never", func(p *PropagationPolicy) {
			p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover(PurgeModeNever, nil)
		}, nil, ""},
		{"application failover purging directly", func(p *PropagationPolicy) {
			p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover(PurgeModeDirectly, nil)
		}, nil, ""},
		{"application failover preserving state", func(p *PropagationPolicy) {
			p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover("", nil)
			p.Spec.Failover.Application.StatePreservation = &StatePreservation{Rules: []StatePreservationRule{{AliasLabelName: "x", JSONPath: "{.x}"}}}
		}, []string{"spec.failover.application.statePreservation"}, "spec.failover.application.statePreservation: Forbidden: not supported by Tether yet (state preservation"},
		{"cluster failover purging directly", func(p *PropagationPolicy) { p.Spec.Failover = clusterFailover(PurgeModeDirectly) },
			[]string{"spec.failover.cluster.purgeMode"}, `spec.failover.cluster.purgeMode: Invalid value: "Directly": not supported by Tether`},
		{"cluster failover purging immediately", func(p *PropagationPolicy) {
			p.Spec.Failover = clusterFailover(PurgeModeImmediately)
		}, []string{"spec.failover.cluster.purgeMode"}, `Unsupported value: "Immediately"`},
		{"cluster failover preserving state", func(p *PropagationPolicy) {
			p.Spec.Failover = clusterFailover("")
			p.Spec.Failover.Cluster.StatePreservation = &StatePreservation{Rules: []StatePreservationRule{{AliasLabelName: "x", JSONPath: "{.x}"}}}
		}, []string{"spec.failover.cluster.statePreservation"}, "spec.failover.cluster.statePreservation: Forbidden: not supported by Tether yet (state preservation"},
		{"workload affinity", func(p *PropagationPolicy) {
			p.Spec.Placement.WorkloadAffinity = &WorkloadAffinity{Affinity: &WorkloadAffinityTerm{GroupByLabelKey: "app.group"}}
		}, []string{"spec.placement.workloadAffinity"}, "spec.placement.workloadAffinity: Forbidden: not supported by Tether yet (workload affinity"},
		{"workload anti-affinity", func(p *PropagationPolicy) {
			p.Spec.Placement.WorkloadAffinity = &WorkloadAffinity{AntiAffinity: &WorkloadAntiAffinityTerm{GroupByLabelKey: "app.group"}}
		}, []string{"spec.placement.workloadAffinity"}, ""},
		{"schedule priority", func(p *PropagationPolicy) {
			p.Spec.SchedulePriority = &SchedulePriority{PriorityClassSource: KubePriorityClass, PriorityClassName: "high"}
		}, []string{"spec.schedulePriority"}, "spec.schedulePriority: Forbidden: not supported by Tether yet (priority-based scheduling"},
		{"another scheduler", func(p *PropagationPolicy) { p.Spec.SchedulerName = "my-scheduler" },
			[]string{"spec.schedulerName"}, `spec.schedulerName: Invalid value: "my-scheduler": Tether has one scheduler, default-scheduler`},
		{"all of them", func(p *PropagationPolicy) {
			p.Spec.SchedulerName = "my-scheduler"
			p.Spec.Placement.WorkloadAffinity = &WorkloadAffinity{Affinity: &WorkloadAffinityTerm{GroupByLabelKey: "app.group"}}
			p.Spec.SchedulePriority = &SchedulePriority{PriorityClassSource: KubePriorityClass, PriorityClassName: "high"}
			p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover("", nil)
			p.Spec.Failover.Cluster = &ClusterFailoverBehavior{PurgeMode: PurgeModeDirectly,
				StatePreservation: &StatePreservation{Rules: []StatePreservationRule{{AliasLabelName: "x", JSONPath: "{.x}"}}}}
		}, []string{"spec.schedulerName", "spec.placement.workloadAffinity", "spec.schedulePriority",
			"spec.failover.cluster.purgeMode", "spec.failover.cluster.statePreservation"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := basePP()
			tt.mutate(p)
			assertErrors(t, tt.name, p.Validate(), tt.want, tt.detail)
			p.SetDefaults()
			assertErrors(t, tt.name+" after SetDefaults", p.Validate(), tt.want, tt.detail)
			c := &ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Spec: p.Spec}
			assertErrors(t, tt.name+" in a ClusterPropagationPolicy", c.Validate(), tt.want, tt.detail)
		})
	}
}

// TestRefusalsSayWhy checks that every refusal says what to do.
func TestRefusalsSayWhy(t *testing.T) {
	p := basePP()
	p.Spec.SchedulerName = "my-scheduler"
	p.Spec.Placement.WorkloadAffinity = &WorkloadAffinity{Affinity: &WorkloadAffinityTerm{GroupByLabelKey: "g"}}
	p.Spec.SchedulePriority = &SchedulePriority{PriorityClassSource: KubePriorityClass, PriorityClassName: "high"}
	p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover("", nil)
	p.Spec.Failover.Application.StatePreservation = &StatePreservation{Rules: []StatePreservationRule{{AliasLabelName: "x", JSONPath: "{.x}"}}}
	p.Spec.Failover.Cluster = &ClusterFailoverBehavior{PurgeMode: PurgeModeDirectly,
		StatePreservation: &StatePreservation{Rules: []StatePreservationRule{{AliasLabelName: "x", JSONPath: "{.x}"}}}}
	errs := p.Validate()
	if len(errs) != 6 {
		t.Fatalf("Validate() = %v; want 6 refusals", errs)
	}
	for _, e := range errs {
		if !strings.Contains(e.Error(), "Tether") || !strings.Contains(e.Error(), "remove") {
			t.Errorf("refusal %q does not say that Tether lacks it and what to do", e.Error())
		}
	}
}
