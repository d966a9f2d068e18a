package apply

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Rules by which an object of a removed work is orphaned rather than
// deleted: the metric label "rule" and the log's.
const (
	// rulePolicy: the work's deletion policy is ORPHAN.
	rulePolicy = "deletion_policy"
	// ruleContainer: a Namespace or CRD whose removal is not its
	// template's deletion; deleting it would delete everything in it.
	ruleContainer = "namespace_or_crd_not_template_deleted"
	// ruleNotEmpty: a Namespace that holds objects the work does not own.
	ruleNotEmpty = "namespace_holds_foreign_objects"
)

// causePruned is the reason label of an object dropped from a work by a
// new version of it.
const causePruned = "pruned"

// metrics count what the applier removes from the member cluster, so that
// a test or an operator can prove that nothing else deleted anything.
type metrics struct {
	// deletes counts objects deleted on a hub's instruction (or a new
	// version of a work dropping them), by reason.
	deletes *prometheus.CounterVec
	// evictions counts objects deleted because their work was orphaned
	// (held from a hub that does not claim it) for the grace period.
	evictions prometheus.Counter
	// orphans counts objects released and kept, by reason and rule.
	orphans *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		deletes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tether_agent_member_deletes_total",
			Help: "Objects the agent deleted in the member cluster on its hub's instruction, by the instruction's reason.",
		}, []string{"reason"}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tether_agent_member_evictions_total",
			Help: "Objects the agent deleted in the member cluster because their work was orphaned for the eviction grace period.",
		}),
		orphans: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tether_agent_member_orphans_total",
			Help: "Objects of removed works the agent released and kept in the member cluster (Tether's marks removed), by reason and rule.",
		}, []string{"reason", "rule"}),
	}
	if reg != nil {
		reg.MustRegister(m.deletes, m.evictions, m.orphans)
	}
	return m
}

// reasonLabel is r as a metric label: "template_deleted", "failover", ...
func reasonLabel(r agentv1.DeleteReason) string {
	return strings.ToLower(strings.TrimPrefix(r.String(), "DELETE_REASON_"))
}
