package placement

import (
	"fmt"
	"sort"
	"strings"
)

// FitError means no cluster passed the filters. The caller clears the
// binding's clusters (Karmada does the same).
type FitError struct {
	// NumAllClusters is the size of the snapshot, deleting clusters included.
	NumAllClusters int
	// Rejected lists every filtered cluster with all its reasons.
	Rejected []Rejection
}

// maxNamedClusters caps how many cluster names a FitError message lists
// per reason: enough to find the culprit, short enough for an event or a
// log line with thousands of clusters (the rest is counted).
const maxNamedClusters = 5

// Error keeps Karmada's text ("0/3 clusters are available: 1 cluster(s)
// had untolerated taint {k:NoSchedule}, 2 cluster(s) did not match ...",
// reasons counted once per cluster by their first reason and sorted) and
// names the clusters after each reason.
func (e *FitError) Error() string {
	names := map[string][]string{}
	for _, r := range e.Rejected {
		if len(r.Reasons) > 0 {
			names[r.Reasons[0]] = append(names[r.Reasons[0]], r.Cluster)
		}
	}
	if len(names) == 0 {
		return fmt.Sprintf("0/%d clusters are available: no cluster exists.", e.NumAllClusters)
	}
	type entry struct{ key, text string }
	entries := make([]entry, 0, len(names))
	for reason, clusters := range names {
		key := fmt.Sprintf("%d %s", len(clusters), reason)
		entries = append(entries, entry{key, key + " (" + nameList(clusters) + ")"})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
	texts := make([]string, len(entries))
	for i, en := range entries {
		texts[i] = en.text
	}
	return fmt.Sprintf("0/%d clusters are available: %s.", e.NumAllClusters, strings.Join(texts, ", "))
}

// nameList joins up to maxNamedClusters names and counts the rest.
func nameList(names []string) string {
	if len(names) <= maxNamedClusters {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamedClusters], ", "), len(names)-maxNamedClusters)
}

// UnschedulableError means the feasible clusters lack the capacity for
// the replicas. The caller keeps the binding's previous clusters.
type UnschedulableError struct {
	Message string
}

func (e *UnschedulableError) Error() string { return e.Message }
