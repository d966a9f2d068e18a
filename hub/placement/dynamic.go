package placement

import (
	"fmt"
	"sort"
)

// weighted is one entry of a dynamic division's weight list.
type weighted struct {
	name   string
	weight int64
}

// byWeightDesc sorts with sort.Sort (not stable), as Karmada does, so
// equal weights end up in the same order for the same input order.
type byWeightDesc []weighted

func (l byWeightDesc) Len() int           { return len(l) }
func (l byWeightDesc) Swap(i, j int)      { l[i], l[j] = l[j], l[i] }
func (l byWeightDesc) Less(i, j int) bool { return l[i].weight > l[j].weight }

// assignDynamic is Karmada's assignByDynamicStrategy for dynamic weights
// and Aggregated. Steady mode keeps what the still-candidate clusters
// had: an equal sum is returned as is, scale-up divides only the missing
// replicas by free capacity and adds them, scale-down shrinks the
// previous assignment proportionally. Fresh mode redivides everything by
// free capacity plus the replicas each cluster already runs.
func assignDynamic(in *Input, aggregate bool, cands []candidate, replicas int32) ([]TargetCluster, error) {
	scheduled, assigned := stillScheduled(in.Previous.Clusters, cands)
	d := division{aggregate: aggregate, uid: in.Workload.UID}
	switch {
	case in.Previous.RescheduleTriggered:
		return d.fresh(cands, scheduled, replicas)
	case assigned > int64(replicas):
		return d.scaleDown(scheduled, replicas)
	case assigned < int64(replicas):
		return d.scaleUp(cands, scheduled, int32(int64(replicas)-assigned))
	}
	return scheduled, nil
}

// stillScheduled is the previous result restricted to the candidates;
// replicas on dropped clusters count as missing.
func stillScheduled(prev []TargetCluster, cands []candidate) ([]TargetCluster, int64) {
	names := make(map[string]bool, len(cands))
	for i := range cands {
		names[cands[i].name()] = true
	}
	var out []TargetCluster
	var sum int64
	for _, t := range prev {
		if names[t.Name] {
			out = append(out, t)
			sum += int64(t.Replicas)
		}
	}
	return out, sum
}

// division holds what every dynamic division shares.
type division struct {
	aggregate bool
	uid       string
}

func (d division) scaleUp(cands []candidate, scheduled []TargetCluster, target int32) ([]TargetCluster, error) {
	list := make([]weighted, len(cands))
	for i := range cands {
		list[i] = weighted{name: cands[i].name(), weight: cands[i].free}
	}
	out, err := d.divide(list, scheduled, target)
	if err != nil {
		return nil, wrapf(err, "failed to scale up")
	}
	return out, nil
}

func (d division) scaleDown(scheduled []TargetCluster, target int32) ([]TargetCluster, error) {
	list := make([]weighted, len(scheduled))
	for i, t := range scheduled {
		list[i] = weighted{name: t.Name, weight: int64(t.Replicas)}
	}
	out, err := d.divide(list, nil, target)
	if err != nil {
		return nil, wrapf(err, "failed to scale down")
	}
	return out, nil
}

func (d division) fresh(cands []candidate, scheduled []TargetCluster, target int32) ([]TargetCluster, error) {
	had := make(map[string]int64, len(scheduled))
	for _, t := range scheduled {
		had[t.Name] += int64(t.Replicas)
	}
	list := make([]weighted, len(cands))
	for i := range cands {
		list[i] = weighted{name: cands[i].name(), weight: cands[i].free + had[cands[i].name()]}
	}
	out, err := d.divide(list, nil, target)
	if err != nil {
		return nil, wrapf(err, "failed to do fresh scale")
	}
	return out, nil
}

// divide sorts the weights (largest first), checks they can hold target,
// for Aggregated keeps the shortest prefix that can (previously used
// clusters first), divides target by Webster and adds init.
func (d division) divide(list []weighted, init []TargetCluster, target int32) ([]TargetCluster, error) {
	sort.Sort(byWeightDesc(list))
	var total int64
	for _, w := range list {
		total += w.weight
	}
	if total < int64(target) {
		return nil, &UnschedulableError{Message: fmt.Sprintf("Clusters available replicas %d are not enough to schedule.", total)}
	}
	if d.aggregate {
		list = shortestPrefix(priorFirst(list, init), target)
	}
	parties := make([]party, len(list))
	for i, w := range list {
		parties[i] = party{name: w.name, votes: w.weight}
	}
	return merge(init, targetsOf(webster(target, parties, d.uid))), nil
}

// priorFirst moves the clusters that had replicas to the front, keeping
// the relative order of both parts.
func priorFirst(list []weighted, init []TargetCluster) []weighted {
	prior := map[string]bool{}
	for _, t := range init {
		if t.Replicas > 0 {
			prior[t.Name] = true
		}
	}
	if len(prior) == 0 {
		return list
	}
	out := make([]weighted, 0, len(list))
	for _, w := range list {
		if prior[w.name] {
			out = append(out, w)
		}
	}
	for _, w := range list {
		if !prior[w.name] {
			out = append(out, w)
		}
	}
	return out
}

// shortestPrefix keeps the first entries whose weights reach target.
func shortestPrefix(list []weighted, target int32) []weighted {
	var sum int64
	for i, w := range list {
		if sum += w.weight; sum >= int64(target) {
			return list[:i+1]
		}
	}
	return list
}

// merge adds old to next (Karmada's MergeTargetClusters): next's order,
// then clusters only in old, in old's order (Karmada: map order).
func merge(old, next []TargetCluster) []TargetCluster {
	if len(old) == 0 {
		return next
	}
	had := make(map[string]int32, len(old))
	for _, t := range old {
		had[t.Name] += t.Replicas
	}
	for i := range next {
		next[i].Replicas += had[next[i].Name]
		delete(had, next[i].Name)
	}
	for _, t := range old {
		if r, ok := had[t.Name]; ok {
			next = append(next, TargetCluster{Name: t.Name, Replicas: r})
			delete(had, t.Name)
		}
	}
	return next
}
