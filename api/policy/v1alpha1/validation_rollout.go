package v1alpha1

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Bounds of a RolloutPolicy, so that one policy cannot make the hub's
// rollout decisions expensive.
const (
	MaxRolloutWindows         = 16
	MaxMandatoryDecisionGroup = 64
)

// cronParser reads five-field schedules and descriptors such as @daily, as
// Kubernetes CronJobs do.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule reads a maintenance window's schedule.
func ParseSchedule(s string) (cron.Schedule, error) { return cronParser.Parse(s) }

// Validate checks a RolloutPolicy: metadata, selectors in the policy's
// namespace, a known strategy type whose parameters match it, well-formed
// gates and windows. A field Tether does not implement fails decoding.
func (p *RolloutPolicy) Validate() field.ErrorList {
	errs := validatePolicyMeta(&p.ObjectMeta, true)
	spec := field.NewPath("spec")
	if len(p.Spec.ResourceSelectors) == 0 {
		errs = append(errs, field.Required(spec.Child("resourceSelectors"), "at least one resource selector is required"))
	}
	errs = append(errs, ValidateResourceSelectors(p.Spec.ResourceSelectors, p.Namespace, spec.Child("resourceSelectors"))...)
	errs = append(errs, validateRolloutStrategy(&p.Spec.RolloutStrategy, spec.Child("rolloutStrategy"))...)
	return append(errs, validateWindows(p.Spec.Windows, spec.Child("windows"))...)
}

func validateRolloutStrategy(s *RolloutStrategy, path *field.Path) field.ErrorList {
	errs := enum(path.Child("type"), s.Type, RolloutAll, RolloutProgressive, RolloutProgressivePerGroup)
	t := s.EffectiveType()
	if s.Progressive != nil && t != RolloutProgressive {
		errs = append(errs, field.Forbidden(path.Child("progressive"), fmt.Sprintf("applies to type Progressive, not %s", t)))
	}
	if s.ProgressivePerGroup != nil && t != RolloutProgressivePerGroup {
		errs = append(errs, field.Forbidden(path.Child("progressivePerGroup"), fmt.Sprintf("applies to type ProgressivePerGroup, not %s", t)))
	}
	if s.GroupBy != "" {
		if t == RolloutAll {
			errs = append(errs, field.Forbidden(path.Child("groupBy"), "applies to types Progressive and ProgressivePerGroup, not All"))
		}
		errs = append(errs, qualifiedName(path.Child("groupBy"), s.GroupBy)...)
	}
	if p := s.Progressive; p != nil {
		errs = append(errs, validateGates(&p.RolloutGates, path.Child("progressive"))...)
		errs = append(errs, validateCount(p.MaxConcurrency, 1, path.Child("progressive", "maxConcurrency"))...)
	}
	if p := s.ProgressivePerGroup; p != nil {
		errs = append(errs, validateGates(&p.RolloutGates, path.Child("progressivePerGroup"))...)
	}
	return errs
}

func validateGates(g *RolloutGates, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if g.MinSuccessTime.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("minSuccessTime"), g.MinSuccessTime.Duration.String(), "must not be negative"))
	}
	if _, err := ParseProgressDeadline(g.ProgressDeadline); err != nil {
		errs = append(errs, field.Invalid(path.Child("progressDeadline"), g.ProgressDeadline, err.Error()))
	}
	errs = append(errs, validateCount(g.MaxFailures, 0, path.Child("maxFailures"))...)
	return append(errs, validateGroups(g.MandatoryDecisionGroups, path.Child("mandatoryDecisionGroups"))...)
}

// ParseProgressDeadline reads a progressDeadline: 0 (no deadline) for ""
// or "None", else a positive duration such as 5m.
func ParseProgressDeadline(s string) (time.Duration, error) {
	if s == "" || s == ProgressDeadlineNone {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf(`must be "None" or a positive duration such as 5m`)
	}
	return d, nil
}

// validateCount checks an integer of at least min or a percentage from
// min to 100.
func validateCount(v *intstr.IntOrString, min int, path *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		if int(v.IntVal) < min {
			return field.ErrorList{field.Invalid(path, v.IntVal, fmt.Sprintf("must be at least %d", min))}
		}
		return nil
	}
	pct, ok := strings.CutSuffix(v.StrVal, "%")
	n, err := intstr.GetScaledValueFromIntOrPercent(v, 100, false)
	if !ok || err != nil || n < min || n > 100 || pct == "" {
		return field.ErrorList{field.Invalid(path, v.StrVal, fmt.Sprintf("must be an integer or a percentage from %d%% to 100%%", min))}
	}
	return nil
}

func validateGroups(groups []MandatoryDecisionGroup, path *field.Path) field.ErrorList {
	if len(groups) > MaxMandatoryDecisionGroup {
		return field.ErrorList{field.TooMany(path, len(groups), MaxMandatoryDecisionGroup)}
	}
	var errs field.ErrorList
	seen := make(map[string]bool)
	for i, g := range groups {
		p := path.Index(i).Child("groupName")
		switch {
		case g.GroupName == "":
			errs = append(errs, field.Required(p, ""))
		case seen[g.GroupName]:
			errs = append(errs, field.Duplicate(p, g.GroupName))
		}
		for _, msg := range validation.IsValidLabelValue(g.GroupName) {
			errs = append(errs, field.Invalid(p, g.GroupName, msg))
		}
		seen[g.GroupName] = true
	}
	return errs
}

func validateWindows(windows []MaintenanceWindow, path *field.Path) field.ErrorList {
	if len(windows) > MaxRolloutWindows {
		return field.ErrorList{field.TooMany(path, len(windows), MaxRolloutWindows)}
	}
	var errs field.ErrorList
	for i := range windows {
		w, p := &windows[i], path.Index(i)
		if w.ClusterSelector == nil {
			errs = append(errs, field.Required(p.Child("clusterSelector"), ""))
		} else {
			errs = append(errs, validateLabelSelector(w.ClusterSelector, p.Child("clusterSelector"))...)
		}
		if _, err := ParseSchedule(w.Schedule); err != nil {
			errs = append(errs, field.Invalid(p.Child("schedule"), w.Schedule, err.Error()))
		}
		if w.Duration.Duration <= 0 {
			errs = append(errs, field.Invalid(p.Child("duration"), w.Duration.Duration.String(), "must be positive"))
		}
	}
	return errs
}
