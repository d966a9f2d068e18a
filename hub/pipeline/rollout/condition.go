package rollout

import (
	"fmt"
	"sort"
	"strings"
)

// ConditionType is the condition a template's .status carries while a
// RolloutPolicy paces it (Condition): a Tether-qualified type, so that it
// never collides with the kind's own conditions (a Deployment's Available
// and Progressing, kstatus's Ready, Reconciling and Stalled).
const ConditionType = "rollout.tether.io/Rollout"

// Condition is the rollout of r as a Kubernetes condition for the
// template's .status: status "True" once Complete, "False" when Paused
// (an operator's pause, or too many failures: the message says which and
// names the clusters), "Unknown" while Progressing; reason is the phase;
// the message counts the clusters at the revision and names those that
// failed or were skipped.
func Condition(r *Record) map[string]any {
	st := &r.State
	status := "Unknown"
	switch {
	case st.Phase == Complete:
		status = "True"
	case st.Phase == Paused || st.Held:
		status = "False"
	}
	reason := string(st.Phase)
	if st.Held && st.Phase != Paused {
		reason = string(Paused)
	}
	return map[string]any{
		"type":    ConditionType,
		"status":  status,
		"reason":  reason,
		"message": conditionMessage(r),
	}
}

// conditionMessage says how far the rollout of r is: "policy ns/name:
// revision R on 2/3 clusters; failed: m1; skipped: m3", and the state's
// own message (why it paused) after it.
func conditionMessage(r *Record) string {
	st := &r.State
	done, byPhase := 0, map[Phase][]string{}
	for name, c := range st.Clusters {
		if c.Phase == Succeeded {
			done++
		}
		byPhase[c.Phase] = append(byPhase[c.Phase], name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "RolloutPolicy %s: revision %s succeeded on %d/%d clusters", r.Policy, st.Revision, done, len(st.Clusters))
	for _, p := range []Phase{Failed, Skipped, Waiting} {
		if names := byPhase[p]; len(names) > 0 {
			sort.Strings(names)
			fmt.Fprintf(&b, "; %s: %s", strings.ToLower(string(p)), strings.Join(names, ", "))
		}
	}
	if st.Held {
		b.WriteString("; paused by an operator")
	}
	if st.Message != "" {
		b.WriteString("; " + st.Message)
	}
	return b.String()
}
