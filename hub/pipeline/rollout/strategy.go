package rollout

import (
	"fmt"
	"sort"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// Strategy is a RolloutPolicy's spec, parsed once.
type Strategy struct {
	Type           policyv1alpha1.RolloutType
	GroupLabel     string
	Mandatory      []string
	MaxConcurrency *intstr.IntOrString // nil: 1 (Progressive only)
	MaxFailures    *intstr.IntOrString // nil: 0
	MinSuccess     time.Duration
	Deadline       time.Duration // 0: none
	Windows        []Window
}

// Window is a maintenance window, parsed.
type Window struct {
	Clusters labels.Selector
	Schedule cron.Schedule
	Duration time.Duration
}

// Compile parses a (validated) RolloutPolicy spec.
func Compile(spec *policyv1alpha1.RolloutSpec) (Strategy, error) {
	rs := &spec.RolloutStrategy
	g := rs.Gates()
	s := Strategy{Type: rs.EffectiveType(), GroupLabel: rs.GroupLabel(), MaxFailures: g.MaxFailures,
		MinSuccess: g.MinSuccessTime.Duration}
	for _, m := range g.MandatoryDecisionGroups {
		s.Mandatory = append(s.Mandatory, m.GroupName)
	}
	if rs.Progressive != nil {
		s.MaxConcurrency = rs.Progressive.MaxConcurrency
	}
	var err error
	if s.Deadline, err = policyv1alpha1.ParseProgressDeadline(g.ProgressDeadline); err != nil {
		return Strategy{}, fmt.Errorf("progressDeadline: %w", err)
	}
	for i, w := range spec.Windows {
		sel, err := metav1.LabelSelectorAsSelector(w.ClusterSelector)
		if err != nil {
			return Strategy{}, fmt.Errorf("windows[%d].clusterSelector: %w", i, err)
		}
		sched, err := policyv1alpha1.ParseSchedule(w.Schedule)
		if err != nil {
			return Strategy{}, fmt.Errorf("windows[%d].schedule: %w", i, err)
		}
		s.Windows = append(s.Windows, Window{Clusters: sel, Schedule: sched, Duration: w.Duration.Duration})
	}
	return s, nil
}

// wave is a set of clusters that the rollout takes together.
type wave struct {
	clusters  []string
	mandatory bool
}

// waves orders the clusters: the mandatory groups in the order given, then
// the others in one wave (Progressive) or one per group value (in order,
// clusters without the label last; ProgressivePerGroup). Type All is one
// wave of every cluster.
func (s *Strategy) waves(clusters []Cluster) []wave {
	if s.Type == policyv1alpha1.RolloutAll || s.Type == "" {
		return []wave{{clusters: names(clusters)}}
	}
	byGroup := make(map[string][]string)
	for _, c := range clusters {
		v := c.Labels[s.GroupLabel]
		byGroup[v] = append(byGroup[v], c.Name)
	}
	var out []wave
	for _, g := range s.Mandatory {
		if cs := byGroup[g]; len(cs) > 0 {
			out = append(out, wave{clusters: cs, mandatory: true})
		}
		delete(byGroup, g)
	}
	if s.Type == policyv1alpha1.RolloutProgressive {
		var rest []string
		for _, cs := range byGroup {
			rest = append(rest, cs...)
		}
		sort.Strings(rest)
		return append(out, wave{clusters: rest})
	}
	var values []string
	for v := range byGroup {
		if v != "" {
			values = append(values, v)
		}
	}
	sort.Strings(values)
	if _, ok := byGroup[""]; ok {
		values = append(values, "")
	}
	for _, v := range values {
		out = append(out, wave{clusters: byGroup[v]})
	}
	return out
}

// concurrency is how many clusters of a wave may be in flight at once.
func (s *Strategy) concurrency(total int) int {
	if s.Type != policyv1alpha1.RolloutProgressive {
		return total
	}
	if s.MaxConcurrency == nil {
		return 1
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(s.MaxConcurrency, total, true)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// maxFailures is how many failures the rollout tolerates.
func (s *Strategy) maxFailures(total int) int {
	if s.MaxFailures == nil {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(s.MaxFailures, total, false)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// window reports whether c may be admitted at now (none of the windows
// selects it, or one that does is open) and, when not, when the first of
// its windows opens.
func (s *Strategy) window(c Cluster, now time.Time) (bool, time.Time) {
	var next time.Time
	selected := false
	for _, w := range s.Windows {
		if !w.Clusters.Matches(labels.Set(c.Labels)) {
			continue
		}
		selected = true
		if start := w.Schedule.Next(now.Add(-w.Duration)); !start.After(now) {
			return true, time.Time{}
		}
		if n := w.Schedule.Next(now); next.IsZero() || n.Before(next) {
			next = n
		}
	}
	return !selected, next
}

func names(clusters []Cluster) []string {
	out := make([]string, len(clusters))
	for i, c := range clusters {
		out[i] = c.Name
	}
	sort.Strings(out)
	return out
}
