package v1alpha1

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func ptr[T any](v T) *T { return &v }

func basePP() *PropagationPolicy {
	return &PropagationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: KindPropagationPolicy},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default"},
		Spec: PropagationSpec{
			ResourceSelectors: []ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}},
			Placement: Placement{
				ClusterAffinity: &ClusterAffinity{ClusterNames: []string{"m1", "m2"}},
			},
		},
	}
}

// affinities returns clusterAffinities terms named after names, each
// selecting one cluster.
func affinities(names ...string) []ClusterAffinityTerm {
	terms := make([]ClusterAffinityTerm, len(names))
	for i, n := range names {
		terms[i] = ClusterAffinityTerm{AffinityName: n, ClusterAffinity: ClusterAffinity{ClusterNames: []string{"c-" + n}}}
	}
	return terms
}

func withOverflow(p *Placement, names ...string) {
	p.ClusterAffinity = nil
	p.ClusterAffinities = affinities("primary")
	for _, n := range names {
		p.ClusterAffinities[0].OverflowAffinities = append(p.ClusterAffinities[0].OverflowAffinities,
			OverflowClusterAffinity{AffinityName: n, ClusterAffinity: ClusterAffinity{ClusterNames: []string{"o-" + n}}})
	}
}

func fieldSelector(key string, op corev1.NodeSelectorOperator) *FieldSelector {
	return &FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: []string{"x"}}}}
}

func divided(pref ReplicaDivisionPreference, dynamic DynamicWeightFactor) *ReplicaSchedulingStrategy {
	rs := &ReplicaSchedulingStrategy{ReplicaSchedulingType: ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: pref}
	if dynamic != "" {
		rs.WeightPreference = &ClusterPreferences{DynamicWeight: dynamic}
	}
	return rs
}

func appFailover(mode PurgeMode, grace *int32) *FailoverBehavior {
	return &FailoverBehavior{Application: &ApplicationFailoverBehavior{PurgeMode: mode, GracePeriodSeconds: grace}}
}

// TestValidatePropagationPolicy checks Karmada's rules (karmadaRules);
// TestValidateRefusesUnsupported checks what Validate adds.
func TestValidatePropagationPolicy(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*PropagationPolicy)
		want   []string // paths of the expected errors, in order
		detail string   // a substring of the first error, if set
	}{
		{"valid", func(*PropagationPolicy) {}, nil, ""},
		{"valid with every placement feature", func(p *PropagationPolicy) {
			p.Spec.PropagateDeps = true
			p.Spec.Placement.ClusterTolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr[int64](30)}}
			p.Spec.Placement.SpreadConstraints = []SpreadConstraint{{SpreadByField: SpreadByFieldRegion, MaxGroups: 2, MinGroups: 1}, {SpreadByField: SpreadByFieldCluster}}
			p.Spec.Placement.ReplicaScheduling = &ReplicaSchedulingStrategy{WeightPreference: &ClusterPreferences{
				StaticWeightList: []StaticClusterWeight{{TargetCluster: ClusterAffinity{FieldSelector: fieldSelector(ZoneField, corev1.NodeSelectorOpNotIn)}, Weight: 2}}}}
			p.Spec.Failover = appFailover(PurgeModeGraciously, ptr[int32](60))
			p.Spec.Failover.Cluster = &ClusterFailoverBehavior{PurgeMode: PurgeModeDirectly}
			p.Spec.Suspension = &Suspension{Dispatching: ptr(true), DispatchingOnClusters: &SuspendClusters{}}
			p.Spec.SchedulePriority = &SchedulePriority{PriorityClassSource: KubePriorityClass, PriorityClassName: "high"}
			p.Spec.Placement.WorkloadAffinity = &WorkloadAffinity{Affinity: &WorkloadAffinityTerm{GroupByLabelKey: "app.group"}}
		}, nil, ""},
		{"no selectors", func(p *PropagationPolicy) { p.Spec.ResourceSelectors = nil },
			[]string{"spec.resourceSelectors"}, "Required"},
		{"selector without apiVersion", func(p *PropagationPolicy) { p.Spec.ResourceSelectors[0].APIVersion = "" },
			[]string{"spec.resourceSelectors[0].apiVersion"}, ""},
		{"selector in another namespace", func(p *PropagationPolicy) { p.Spec.ResourceSelectors[0].Namespace = "other" },
			[]string{"spec.resourceSelectors[0].namespace"}, `must be the policy's namespace "default"`},
		{"bad label selector", func(p *PropagationPolicy) {
			p.Spec.ResourceSelectors[0].LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Is"}}}
		}, []string{"spec.resourceSelectors[0].labelSelector.matchExpressions[0].operator"}, ""},
		{"preemption without selector name", func(p *PropagationPolicy) {
			p.Spec.Preemption = PreemptAlways
			p.Spec.ResourceSelectors[0].Name = ""
		}, []string{"spec.resourceSelectors[0].name"}, "the empty name may cause unexpected resources preemption"},
		{"unknown preemption", func(p *PropagationPolicy) { p.Spec.Preemption = "Sometimes" },
			[]string{"spec.preemption"}, "Unsupported value"},
		{"unknown conflict resolution", func(p *PropagationPolicy) { p.Spec.ConflictResolution = "Merge" },
			[]string{"spec.conflictResolution"}, ""},
		{"unknown activation preference", func(p *PropagationPolicy) { p.Spec.ActivationPreference = "Eager" },
			[]string{"spec.activationPreference"}, ""},
		{"clusterAffinity with clusterAffinities", func(p *PropagationPolicy) { p.Spec.Placement.ClusterAffinities = affinities("a") },
			[]string{"spec.placement.clusterAffinities"}, "clusterAffinities cannot co-exist with clusterAffinity"},
		{"field selector key", func(p *PropagationPolicy) {
			p.Spec.Placement.ClusterAffinity.FieldSelector = fieldSelector("foo", corev1.NodeSelectorOpIn)
		}, []string{"spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key"}, `unsupported key "foo", must be provider, region, or zone`},
		{"field selector operator", func(p *PropagationPolicy) {
			p.Spec.Placement.ClusterAffinity.FieldSelector = fieldSelector(ProviderField, corev1.NodeSelectorOpExists)
		}, []string{"spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].operator"}, `unsupported operator "Exists", must be In or NotIn`},
		{"empty affinity name", func(p *PropagationPolicy) {
			p.Spec.Placement.ClusterAffinity, p.Spec.Placement.ClusterAffinities = nil, affinities("")
		}, []string{"spec.placement.clusterAffinities[0].affinityName"}, "Required"},
		{"long affinity name", func(p *PropagationPolicy) {
			p.Spec.Placement.ClusterAffinity, p.Spec.Placement.ClusterAffinities = nil, affinities(strings.Repeat("a", 33))
		}, []string{"spec.placement.clusterAffinities[0].affinityName"}, "Too long"},
		{"affinity name syntax", func(p *PropagationPolicy) {
			p.Spec.Placement.ClusterAffinity, p.Spec.Placement.ClusterAffinities = nil, affinities("a b")
		}, []string{"spec.placement.clusterAffinities[0].affinityName"}, ""},
		{"duplicate affinity names", func(p *PropagationPolicy) {
			p.Spec.Placement.ClusterAffinity, p.Spec.Placement.ClusterAffinities = nil, affinities("a", "b", "a")
		}, []string{"spec.placement.clusterAffinities[2].affinityName"}, "each affinity term in a policy must have a unique name"},
		{"field selector in a term", func(p *PropagationPolicy) {
			p.Spec.Placement.ClusterAffinity, p.Spec.Placement.ClusterAffinities = nil, affinities("a")
			p.Spec.Placement.ClusterAffinities[0].FieldSelector = fieldSelector("rack", corev1.NodeSelectorOpIn)
		}, []string{"spec.placement.clusterAffinities[0].fieldSelector.matchExpressions[0].key"}, ""},
		{"overflow with Duplicated", func(p *PropagationPolicy) { withOverflow(&p.Spec.Placement, "burst") },
			[]string{"spec.placement.clusterAffinities[0].overflowAffinities"}, "can only be used together with dynamic weight or aggregated scheduling"},
		{"overflow with static weights", func(p *PropagationPolicy) {
			withOverflow(&p.Spec.Placement, "burst")
			p.Spec.Placement.ReplicaScheduling = divided(ReplicaDivisionPreferenceWeighted, "")
		}, []string{"spec.placement.clusterAffinities[0].overflowAffinities"}, ""},
		{"overflow with Aggregated", func(p *PropagationPolicy) {
			withOverflow(&p.Spec.Placement, "burst")
			p.Spec.Placement.ReplicaScheduling = divided(ReplicaDivisionPreferenceAggregated, "")
		}, nil, ""},
		{"overflow with dynamic weights and defaulted type", func(p *PropagationPolicy) {
			withOverflow(&p.Spec.Placement, "burst")
			p.Spec.Placement.ReplicaScheduling = divided("", DynamicWeightByAvailableReplicas)
			p.Spec.Placement.ReplicaScheduling.ReplicaSchedulingType = ""
		}, nil, ""},
		{"overflow without inline affinity", func(p *PropagationPolicy) {
			withOverflow(&p.Spec.Placement, "burst")
			p.Spec.Placement.ClusterAffinities[0].ClusterAffinity = ClusterAffinity{}
			p.Spec.Placement.ReplicaScheduling = divided(ReplicaDivisionPreferenceAggregated, "")
		}, []string{"spec.placement.clusterAffinities[0].overflowAffinities"}, "can only be used together with the inline ClusterAffinity"},
		{"overflow named like the primary", func(p *PropagationPolicy) {
			withOverflow(&p.Spec.Placement, "burst", "primary")
			p.Spec.Placement.ReplicaScheduling = divided(ReplicaDivisionPreferenceAggregated, "")
		}, []string{"spec.placement.clusterAffinities[0].overflowAffinities[1].affinityName"}, "must not duplicate the primary group's affinityName"},
		{"numeric toleration operator", func(p *PropagationPolicy) {
			p.Spec.Placement.ClusterTolerations = []corev1.Toleration{{Key: "k", Operator: "Lt", Value: "3"}}
		}, []string{"spec.placement.clusterTolerations[0].operator"}, "Unsupported value"},
		{"toleration effect", func(p *PropagationPolicy) {
			p.Spec.Placement.ClusterTolerations = []corev1.Toleration{{Key: "k", Effect: "NoWay"}}
		}, []string{"spec.placement.clusterTolerations[0].effect"}, ""},
		{"spread by field and label", func(p *PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints = []SpreadConstraint{{SpreadByField: SpreadByFieldCluster, SpreadByLabel: "rack"}}
		}, []string{"spec.placement.spreadConstraints[0].spreadByLabel"}, "spreadByLabel should not co-exist with spreadByField"},
		{"negative maxGroups", func(p *PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints = []SpreadConstraint{{SpreadByLabel: "rack", MaxGroups: -1}}
		}, []string{"spec.placement.spreadConstraints[0].maxGroups"}, "maxGroups lower than 0 is not allowed"},
		{"negative minGroups", func(p *PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints = []SpreadConstraint{{SpreadByLabel: "rack", MinGroups: -1}}
		}, []string{"spec.placement.spreadConstraints[0].minGroups"}, "minGroups lower than 0 is not allowed"},
		{"maxGroups below minGroups", func(p *PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints = []SpreadConstraint{{SpreadByField: SpreadByFieldCluster, MaxGroups: 1, MinGroups: 2}}
		}, []string{"spec.placement.spreadConstraints[0].maxGroups"}, "maxGroups lower than minGroups is not allowed"},
		{"duplicate spread field", func(p *PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints = []SpreadConstraint{{SpreadByField: SpreadByFieldRegion}, {SpreadByField: SpreadByFieldRegion}, {SpreadByField: SpreadByFieldCluster}}
		}, []string{"spec.placement.spreadConstraints[1].spreadByField"}, "multiple region spread constraints are not allowed"},
		{"spread by region without cluster", func(p *PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints = []SpreadConstraint{{SpreadByField: SpreadByFieldRegion}}
		}, []string{"spec.placement.spreadConstraints"}, "the cluster spread constraint must be enabled"},
		{"empty spread constraint counts as cluster", func(p *PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints = []SpreadConstraint{{MaxGroups: 2}, {SpreadByField: SpreadByFieldRegion}}
		}, nil, ""},
		{"empty spread constraint and a cluster one", func(p *PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints = []SpreadConstraint{{}, {SpreadByField: SpreadByFieldCluster}}
		}, []string{"spec.placement.spreadConstraints[1].spreadByField"}, "multiple cluster spread constraints are not allowed"},
		{"unknown spread field", func(p *PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints = []SpreadConstraint{{SpreadByField: "rack"}, {SpreadByField: SpreadByFieldCluster}}
		}, []string{"spec.placement.spreadConstraints[0].spreadByField"}, "Unsupported value"},
		{"unknown replica scheduling type", func(p *PropagationPolicy) {
			p.Spec.Placement.ReplicaScheduling = &ReplicaSchedulingStrategy{ReplicaSchedulingType: "Spread"}
		}, []string{"spec.placement.replicaScheduling.replicaSchedulingType"}, `supported values: "Duplicated", "Divided"`},
		{"unknown division preference", func(p *PropagationPolicy) {
			p.Spec.Placement.ReplicaScheduling = divided("Even", "")
		}, []string{"spec.placement.replicaScheduling.replicaDivisionPreference"}, ""},
		{"unknown dynamic weight", func(p *PropagationPolicy) {
			p.Spec.Placement.ReplicaScheduling = divided(ReplicaDivisionPreferenceWeighted, "FreeCPU")
		}, []string{"spec.placement.replicaScheduling.weightPreference.dynamicWeight"}, ""},
		{"static weight 0", func(p *PropagationPolicy) {
			p.Spec.Placement.ReplicaScheduling = divided(ReplicaDivisionPreferenceWeighted, "")
			p.Spec.Placement.ReplicaScheduling.WeightPreference = &ClusterPreferences{StaticWeightList: []StaticClusterWeight{
				{TargetCluster: ClusterAffinity{ClusterNames: []string{"m1"}}, Weight: 1},
				{TargetCluster: ClusterAffinity{ClusterNames: []string{"m2"}}, Weight: 0}}}
		}, []string{"spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight"}, "must be greater than or equal to 1"},
		{"workload affinity and anti-affinity on one key", func(p *PropagationPolicy) {
			p.Spec.Placement.WorkloadAffinity = &WorkloadAffinity{
				Affinity: &WorkloadAffinityTerm{GroupByLabelKey: "app"}, AntiAffinity: &WorkloadAntiAffinityTerm{GroupByLabelKey: "app"}}
		}, []string{"spec.placement.workloadAffinity.antiAffinity.groupByLabelKey"}, "must not use the same groupByLabelKey"},
		{"workload affinity key syntax", func(p *PropagationPolicy) {
			p.Spec.Placement.WorkloadAffinity = &WorkloadAffinity{Affinity: &WorkloadAffinityTerm{GroupByLabelKey: "INVALID KEY!"}}
		}, []string{"spec.placement.workloadAffinity.affinity.groupByLabelKey"}, ""},
		{"application failover without propagateDeps", func(p *PropagationPolicy) { p.Spec.Failover = appFailover("", nil) },
			[]string{"spec.propagateDeps"}, "application failover is set, propagateDeps must be true"},
		{"negative toleration seconds", func(p *PropagationPolicy) {
			p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover(PurgeModeDirectly, nil)
			p.Spec.Failover.Application.DecisionConditions.TolerationSeconds = ptr[int32](-100)
		}, []string{"spec.failover.application.decisionConditions.tolerationSeconds"}, "must be greater than or equal to 0"},
		{"grace period without graceful purge", func(p *PropagationPolicy) {
			p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover(PurgeModeNever, ptr[int32](100))
		}, []string{"spec.failover.application.gracePeriodSeconds"}, "only takes effect when purgeMode is gracefully"},
		{"grace period 0", func(p *PropagationPolicy) {
			p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover(PurgeModeGracefully, ptr[int32](0))
		}, []string{"spec.failover.application.gracePeriodSeconds"}, "must be greater than 0"},
		{"unknown purge mode", func(p *PropagationPolicy) {
			p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover("Slowly", nil)
		}, []string{"spec.failover.application.purgeMode"}, ""},
		{"cluster failover never purges", func(p *PropagationPolicy) {
			p.Spec.Failover = &FailoverBehavior{Cluster: &ClusterFailoverBehavior{PurgeMode: PurgeModeNever}}
		}, []string{"spec.failover.cluster.purgeMode"}, `supported values: "Directly", "Gracefully"`},
		{"state preservation without rules", func(p *PropagationPolicy) {
			p.Spec.PropagateDeps, p.Spec.Failover = true, appFailover("", nil)
			p.Spec.Failover.Application.StatePreservation = &StatePreservation{}
		}, []string{"spec.failover.application.statePreservation.rules"}, ""},
		{"state preservation alias label", func(p *PropagationPolicy) {
			p.Spec.Failover = &FailoverBehavior{Cluster: &ClusterFailoverBehavior{StatePreservation: &StatePreservation{
				Rules: []StatePreservationRule{{AliasLabelName: "-invalid-label", JSONPath: "{.x}"}}}}}
		}, []string{"spec.failover.cluster.statePreservation.rules[0].aliasLabelName"}, "name part must consist of alphanumeric characters"},
		{"suspension on all and some clusters", func(p *PropagationPolicy) {
			p.Spec.Suspension = &Suspension{Dispatching: ptr(true), DispatchingOnClusters: &SuspendClusters{ClusterNames: []string{"m1"}}}
		}, []string{"spec.suspension"}, "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames"},
		{"schedule priority without class", func(p *PropagationPolicy) {
			p.Spec.SchedulePriority = &SchedulePriority{PriorityClassSource: PodPriorityClass}
		}, []string{"spec.schedulePriority.priorityClassSource", "spec.schedulePriority.priorityClassName"}, "Unsupported value"},
		{"name longer than a label value", func(p *PropagationPolicy) { p.Name = strings.Repeat("a", 64) },
			[]string{"metadata.name"}, "may not be more than 63 bytes"},
		{"name syntax", func(p *PropagationPolicy) { p.Name = "Nginx_1" },
			[]string{"metadata.name"}, "RFC 1123 subdomain"},
		{"no namespace", func(p *PropagationPolicy) { p.Namespace = "" },
			[]string{"metadata.namespace"}, "Required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := basePP()
			tt.mutate(p)
			assertErrors(t, tt.name, karmadaRules(p), tt.want, tt.detail)
			p.SetDefaults()
			assertErrors(t, tt.name+" after SetDefaults", karmadaRules(p), tt.want, tt.detail)
		})
	}
}

// karmadaRules is Validate without RefuseUnsupported: Karmada's own rules,
// which still apply to the fields Tether refuses.
func karmadaRules(p *PropagationPolicy) field.ErrorList {
	errs := validatePolicyMeta(&p.ObjectMeta, true)
	return append(errs, ValidatePropagationSpec(&p.Spec, p.Namespace, field.NewPath("spec"))...)
}

func TestValidateClusterPropagationPolicy(t *testing.T) {
	p := &ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "all"},
		Spec: PropagationSpec{ResourceSelectors: []ResourceSelector{
			{APIVersion: "v1", Kind: "Namespace"}, {APIVersion: "apps/v1", Kind: "Deployment", Namespace: "team-a"}}},
	}
	assertErrors(t, "cluster policy with selectors in any namespace", p.Validate(), nil, "")
	p.Namespace = "default"
	assertErrors(t, "cluster policy with a namespace", p.Validate(), []string{"metadata.namespace"}, "not allowed on this type")
}

// assertErrors checks that errs are at the paths want, in order, and that
// the first one contains detail.
func assertErrors(t *testing.T, name string, errs field.ErrorList, want []string, detail string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Validate(%s) = %v; want errors at %v", name, errs, want)
		return
	}
	if detail != "" && !strings.Contains(errs[0].Error(), detail) {
		t.Errorf("Validate(%s) = %v; want the error to say %q", name, errs[0], detail)
	}
}
