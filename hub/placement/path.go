package placement

import (
	"cmp"
	"slices"
)

// path is one feasible combination of groups found by the search.
type path struct {
	id     int
	groups []group
	weight int64
	value  int64
}

// bestPath is Karmada's selectGroups: a depth-first search over the groups
// (sorted by value asc, weight desc, name asc) for every combination of
// minGroups..maxGroups groups whose values sum to at least target; the
// best has the highest weight, then value, then was found first — except
// that a shorter path which is a prefix of it wins over it.
func bestPath(groups []group, minGroups, maxGroups int, target int64) []group {
	slices.SortFunc(groups, func(a, b group) int {
		if c := cmp.Compare(a.value, b.value); c != 0 {
			return c
		}
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	var found []path
	var stack []group
	var dfs func(sum int64, begin int)
	dfs = func(sum int64, begin int) {
		if sum >= target && len(stack) >= minGroups && len(stack) <= maxGroups {
			found = append(found, newPath(len(found)+1, stack))
			return
		}
		if len(stack) >= maxGroups {
			return
		}
		for i := begin; i < len(groups); i++ {
			stack = append(stack, groups[i])
			dfs(sum+groups[i].value, i+1)
			stack = stack[:len(stack)-1]
		}
	}
	dfs(0, 0)
	if len(found) == 0 {
		return nil
	}
	return prioritize(found).groups
}

// newPath copies the stack, sums it and orders its groups by weight desc,
// name asc.
func newPath(id int, stack []group) path {
	p := path{id: id, groups: slices.Clone(stack)}
	for _, g := range p.groups {
		p.weight += g.weight
		p.value += g.value
	}
	slices.SortFunc(p.groups, func(a, b group) int {
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	return p
}

func prioritize(paths []path) path {
	slices.SortFunc(paths, func(a, b path) int {
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		if c := cmp.Compare(b.value, a.value); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	best := paths[0]
	for _, p := range paths[1:] {
		if isPrefix(p, best) {
			best = p
		}
	}
	return best
}

// isPrefix reports whether sub is strictly shorter than p and names the
// same groups in the same order as p's beginning.
func isPrefix(sub, p path) bool {
	if len(sub.groups) >= len(p.groups) {
		return false
	}
	for i := range sub.groups {
		if p.groups[i].name != sub.groups[i].name {
			return false
		}
	}
	return true
}
