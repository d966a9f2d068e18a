package capacity

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// counted reports whether a node counts toward capacity: schedulable and
// Ready.
func counted(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podUse is what a pod takes: its node ("" while pending) and effective
// request. The pod list keeps only this, not the pods.
type podUse struct {
	node     string
	requests corev1.ResourceList
}

// useOf is what p takes.
func useOf(p *corev1.Pod) podUse {
	return podUse{node: p.Spec.NodeName, requests: podRequests(p)}
}

// usesOf is the use of each pod.
func usesOf(pods []corev1.Pod) []podUse {
	out := make([]podUse, len(pods))
	for i := range pods {
		out[i] = useOf(&pods[i])
	}
	return out
}

// podRequests is a pod's effective request, plus one "pods".
func podRequests(p *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		add(out, c.Resources.Requests)
	}
	for _, c := range p.Spec.InitContainers {
		for name, q := range c.Resources.Requests {
			if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
				out[name] = q.DeepCopy()
			}
		}
	}
	add(out, p.Spec.Overhead)
	out[corev1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	return out
}

// add adds b into a.
func add(a, b corev1.ResourceList) {
	for name, q := range b {
		cur := a[name]
		cur.Add(q)
		a[name] = cur
	}
}

// sub returns a − b, keeping a's keys.
func sub(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range a {
		left := q.DeepCopy()
		if used, ok := b[name]; ok {
			left.Sub(used)
		}
		out[name] = left
	}
	return out
}

// totals are the three sums for a set of nodes.
type totals struct {
	nodes                              int32
	allocatable, allocated, allocating corev1.ResourceList
}

func newTotals() *totals {
	return &totals{allocatable: corev1.ResourceList{}, allocated: corev1.ResourceList{}, allocating: corev1.ResourceList{}}
}

// summarize computes the summary of nodes and the pods' uses (pods
// already exclude Succeeded and Failed ones). groupLabel, when set, adds
// per-group sums; models, when any, add the grade counts.
func summarize(nodes []corev1.Node, pods []podUse, groupLabel string, models []*agentv1.ResourceModel) *agentv1.ResourceSummary {
	all := newTotals()
	groups := map[string]*totals{}
	perNode := map[string]corev1.ResourceList{} // allocated per counted node
	nodeGroup := map[string]string{}
	for i := range nodes {
		n := &nodes[i]
		if !counted(n) {
			continue
		}
		perNode[n.Name] = corev1.ResourceList{}
		all.nodes++
		add(all.allocatable, n.Status.Allocatable)
		if g, ok := n.Labels[groupLabel]; ok && groupLabel != "" {
			nodeGroup[n.Name] = g
			groupOf(groups, g).nodes++
			add(groupOf(groups, g).allocatable, n.Status.Allocatable)
		}
	}
	for _, p := range pods {
		switch used, ok := perNode[p.node]; {
		case p.node == "":
			add(all.allocating, p.requests)
		case ok:
			add(used, p.requests)
			add(all.allocated, p.requests)
			if g, ok := nodeGroup[p.node]; ok {
				add(groupOf(groups, g).allocated, p.requests)
			}
		}
	}
	s := &agentv1.ResourceSummary{
		Allocatable: quantities(all.allocatable),
		Allocated:   quantities(all.allocated),
		Allocating:  quantities(all.allocating),
	}
	s.NodeGroups = groupSummaries(groups)
	s.AllocatableModelings = grade(nodes, perNode, models)
	return s
}

func groupOf(groups map[string]*totals, name string) *totals {
	t, ok := groups[name]
	if !ok {
		t = newTotals()
		groups[name] = t
	}
	return t
}

func groupSummaries(groups map[string]*totals) []*agentv1.NodeGroupSummary {
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*agentv1.NodeGroupSummary
	for _, n := range names {
		t := groups[n]
		out = append(out, &agentv1.NodeGroupSummary{
			Name: n, NodeCount: t.nodes,
			Allocatable: quantities(t.allocatable), Allocated: quantities(t.allocated), Allocating: quantities(t.allocating),
		})
	}
	return out
}

// quantities renders a resource list as the protocol's strings.
func quantities(l corev1.ResourceList) map[string]string {
	out := make(map[string]string, len(l))
	for name, q := range l {
		out[string(name)] = q.String()
	}
	return out
}

// grade counts the counted nodes per resource-model grade by what each has
// left. A node falls in the highest grade whose every range it meets
// (min ≤ left < max; a resource the node lacks counts as zero), as
// Karmada's modeling does; a node below grade 0 is not counted.
func grade(nodes []corev1.Node, perNode map[string]corev1.ResourceList, models []*agentv1.ResourceModel) []*agentv1.AllocatableModeling {
	if len(models) == 0 {
		return nil
	}
	models = append([]*agentv1.ResourceModel(nil), models...)
	sort.SliceStable(models, func(i, j int) bool { return models[i].GetGrade() < models[j].GetGrade() })
	counts := make([]int64, len(models))
	for i := range nodes {
		used, ok := perNode[nodes[i].Name]
		if !ok {
			continue
		}
		left := sub(nodes[i].Status.Allocatable, used)
		for j := len(models) - 1; j >= 0; j-- {
			if inGrade(left, models[j]) {
				counts[j]++
				break
			}
		}
	}
	out := make([]*agentv1.AllocatableModeling, len(models))
	for j, m := range models {
		out[j] = &agentv1.AllocatableModeling{Grade: m.GetGrade(), Count: counts[j]}
	}
	return out
}

// inGrade reports whether left meets every range of m. An empty min is 0;
// an empty max is unbounded; a malformed bound never matches.
func inGrade(left corev1.ResourceList, m *agentv1.ResourceModel) bool {
	for _, r := range m.GetRanges() {
		have := left[corev1.ResourceName(r.GetName())]
		if r.GetMin() != "" {
			lo, err := resource.ParseQuantity(r.GetMin())
			if err != nil || have.Cmp(lo) < 0 {
				return false
			}
		}
		if r.GetMax() != "" {
			hi, err := resource.ParseQuantity(r.GetMax())
			if err != nil || have.Cmp(hi) >= 0 {
				return false
			}
		}
	}
	return true
}
