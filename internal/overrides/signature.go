package overrides

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// Signature identifies what the rules of cops and ops read of cluster c:
// for every rule, whether it targets c and, when it does, the values its
// valueFrom sources take for c. Clusters with equal signatures get the
// same object from Apply for any template these policies select, so a
// renderer may render once for all of them. A cluster that cannot answer
// a source gets a signature of its own, so that its render error names
// it.
func Signature(c *clusterv1alpha1.Cluster, cops []policyv1alpha1.ClusterOverridePolicy, ops []policyv1alpha1.OverridePolicy) string {
	var sb strings.Builder
	add := func(spec *policyv1alpha1.OverrideSpec) {
		rs, _ := rules(spec)
		for i := range rs {
			if rs[i].TargetCluster != nil && !MatchesCluster(c, *rs[i].TargetCluster) {
				sb.WriteByte('0')
				continue
			}
			sb.WriteByte('1')
			walkSources(&rs[i].Overriders, func(s *policyv1alpha1.ClusterValueSource) {
				v, err := ClusterValue(c, s)
				if err != nil {
					v = "\x00" + c.Name
				}
				sb.WriteString(strconv.Quote(v))
			})
		}
	}
	for i := range cops {
		add(&cops[i].Spec)
	}
	for i := range ops {
		add(&ops[i].Spec)
	}
	return sb.String()
}

// SameForOverrides reports whether override rules see clusters a and b
// alike: MatchesCluster reads the name, labels, provider, region and
// zones, and valueFrom sources the name, labels and annotations.
func SameForOverrides(a, b *clusterv1alpha1.Cluster) bool {
	return a.Name == b.Name && maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		a.Spec.Provider == b.Spec.Provider && a.Spec.Region == b.Spec.Region && a.Spec.Zone == b.Spec.Zone &&
		slices.Equal(a.Spec.Zones, b.Spec.Zones)
}
