// Package v1alpha1 holds the cluster.tether.io/v1alpha1 Cluster: a member
// cluster as the hub knows it, with the properties placement selects on
// (provider, region, zones, labels, taints, resource models) and the status
// its agent reports (conditions, API enablements, node and resource
// summaries).
//
// The shapes are Karmada's cluster.karmada.io/v1alpha1 Cluster (which
// api/codec accepts as an alias), adapted to Tether's pull model: an agent
// dials the hub, so there is no API endpoint, credentials secret, proxy or
// sync mode. A Karmada Cluster that sets those fields is rejected by strict
// decoding.
//
// It imports only Kubernetes API packages.
package v1alpha1
