// Package capacity describes the member cluster for the agent's heartbeat
// (DESIGN §4, Capacity): its Kubernetes version, a resource summary, the
// APIs it serves and a Ready condition, so the hub can schedule with
// dynamic weights and aggregated replicas without ever reaching the
// cluster.
//
// # Use
//
//	m, err := capacity.New(capacity.Config{RESTConfig: rc}, logger)
//	hb, err := m.Heartbeat(ctx, settings.GetResourceModels())
//
// Meter implements agent/hubclient.CapacitySource. It starts no goroutine:
// each Heartbeat lists nodes and non-terminal pods (server-side filtered,
// DefaultPodPage pods per request, decoded one pod at a time and reduced
// to its node and requests)
// and reuses the API enablements for APIRefresh.
//
// # What counts
//
// Like Karmada's scheduler-estimator, only nodes that can take new pods
// count: a node that is cordoned (spec.unschedulable) or whose Ready
// condition is not True is left out of allocatable, and the pods bound to it
// are left out of allocated, so allocatable − allocated is what the cluster
// can still run. (Karmada's cluster-status controller sums every node; its
// estimator, which scheduling actually trusts, skips these.)
//
//   - allocatable: the sum of the counted nodes' status.allocatable.
//   - allocated: the requests of the pods bound to counted nodes that are
//     not Succeeded or Failed, plus one "pods" per pod.
//   - allocating: the same for pods not yet bound to a node (pending).
//
// A pod's request is Kubernetes' effective request: per resource, the
// larger of the sum of its containers' requests and the largest init
// container's request, plus the pod overhead. With Config.NodeGroupLabel
// set, the same sums are reported per value of that node label; with
// resource models from the hub, counted nodes are graded by what they have
// left (allocatable minus allocated), Karmada's allocatableModelings.
//
// It reaches the member through agent/kube (and client-go's rest) and
// imports the generated agent protocol; never hub/.
package capacity
