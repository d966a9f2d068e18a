package clientapi

import (
	"encoding/json"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
)

// clusterObject is the JSON of a cluster as a cluster.tether.io/v1alpha1
// Cluster, the shape a Karmada user reads with kubectl get cluster -o
// yaml: the stored record (metadata with labels, annotations and the
// revision as resourceVersion; spec with taints and resource models), its
// status brought up to hb, the last heartbeat this replica received, when
// there is one. nil when it cannot be encoded (it always can: the record
// was decoded from JSON).
func clusterObject(c *clusterv1alpha1.Cluster, hb *agentv1.Heartbeat) []byte {
	obj := *c
	obj.APIVersion, obj.Kind = clusterv1alpha1.GroupVersion.String(), clusterv1alpha1.KindCluster
	if hb != nil {
		obj.Status = lease.ClusterStatus(c.Status, hb)
	}
	js, err := json.Marshal(&obj)
	if err != nil {
		return nil
	}
	return js
}
