// Package kube is the agent's client of its member cluster's API server
// for what is not a work's object: the core/v1 objects it reads and
// writes itself (Nodes and Pods for capacity, Events, the state Secret),
// the APIs the server serves (discovery), /readyz and /version. The
// works' objects go through client-go's dynamic client (agent/apply).
//
// It stands in for client-go's typed clientset and discovery client,
// which link every built-in API group into the binary and register all
// of them in a scheme at start-up (some 16 MB of the agent's resident
// memory, mostly the binary's pages: 47 MB at rest before, 31 MB after;
// issue 16). Here only core/v1 is
// typed, over a scheme of its own, and it talks protobuf.
//
// # Use
//
//	c, err := kube.New(restConfig)
//	nodes, err := c.Nodes().List(ctx, metav1.ListOptions{})
//	next, err := c.PodPage(ctx, metav1.ListOptions{Limit: 500}, func(p *corev1.Pod) { ... })
//	lists, err := c.Discover(ctx)            // every group version served
//	list, err := c.Resources(ctx, gv)        // one group version
//	err = c.Readyz(ctx)
//	kube.NewRequests(reg).Wrap(restConfig) // count every request, by verb and resource
//
// PodPage decodes a page of pods one pod at a time, so that a cluster's
// pods are never held decoded at once. A typed resource's methods have
// client-go's signatures, so a consumer's small interface
// (agent/state/secret.Secrets) is met by client-go's typed clients in
// tests as well.
//
// # Discovery
//
// Discover asks /api and /apis for aggregated discovery (Kubernetes ≥
// 1.30 serves it; two requests for everything) and falls back to one
// request per group version on a server without it. Lists have no
// subresources; a group's versions come in its order of preference.
// Group versions the server could not describe (an aggregated API that is
// down, reported stale) are left out, named by a *PartialError returned
// with the rest, as client-go's discovery does.
package kube
