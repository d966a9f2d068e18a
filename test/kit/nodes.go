package kit

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tetherproj/tether/test/proc"
)

// AddNodes creates kwok nodes in the cluster. Quantities a spec leaves empty
// come from DefaultNode. It does not wait for the nodes to become Ready (kwok
// makes them Ready within moments); WaitNodesReady does.
func (c *Cluster) AddNodes(ctx context.Context, specs ...NodeSpec) error {
	specs, err := nodeSpecs(specs)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	nodes := c.Clientset().CoreV1().Nodes()
	for _, s := range specs {
		node, err := newNode(s)
		if err != nil {
			return fmt.Errorf("cluster %s: node %s: %w", c.Name, s.Name, err)
		}
		if _, err := nodes.Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("cluster %s: create node %s: %w", c.Name, s.Name, err)
		}
	}
	return nil
}

// newNode builds the Node object for a spec: the standard labels plus the
// spec's, the annotation that hands it to kwok, and capacity = allocatable.
// The API server keeps the status given on create; kwok's node-initialize
// stage keeps the capacity and fills in conditions, addresses and node info.
func newNode(s NodeSpec) (*corev1.Node, error) {
	res, err := s.resources()
	if err != nil {
		return nil, err
	}
	labels := map[string]string{
		corev1.LabelHostname:   s.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
		"type":                 "kwok",
	}
	maps.Copy(labels, s.Labels)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        s.Name,
			Labels:      labels,
			Annotations: map[string]string{kwokNodeAnnotation: kwokNodeValue},
		},
		Spec: corev1.NodeSpec{Taints: s.Taints},
		Status: corev1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
		},
	}, nil
}

// waitReady waits until the cluster can run pods: the `default`
// ServiceAccount exists (the ServiceAccount admission plugin refuses pods
// without one) and every node of the spec is Ready and free of the not-ready
// and unreachable taints (the node-lifecycle controller removes them once kwok
// reports the node Ready). It fails
// at once if one of procs exits.
func (c *Cluster) waitReady(ctx context.Context, procs []*process) error {
	cs := c.Clientset()
	return proc.Poll(ctx, pollAPI, func(ctx context.Context) error {
		for _, p := range procs {
			if p.Exited() {
				return proc.Permanent(p.ExitError())
			}
		}
		if _, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return fmt.Errorf("default service account: %w", err)
		}
		return c.nodesReady(ctx, c.spec.Nodes)
	})
}

// WaitNodesReady waits until every node of the cluster is Ready and
// free of the not-ready and unreachable taints.
func (c *Cluster) WaitNodesReady(ctx context.Context) error {
	return proc.Poll(ctx, pollAPI, func(ctx context.Context) error { return c.nodesReady(ctx, nil) })
}

// nodesReady checks the nodes of specs, or all nodes if specs is nil.
func (c *Cluster) nodesReady(ctx context.Context, specs []NodeSpec) error {
	list, err := c.Clientset().CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	byName := map[string]*corev1.Node{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if specs == nil {
		names = names[:0]
		for name := range byName {
			names = append(names, name)
		}
	}
	for _, name := range names {
		n, ok := byName[name]
		if !ok {
			return fmt.Errorf("node %s not found", name)
		}
		if err := nodeReady(n); err != nil {
			return fmt.Errorf("node %s: %w", name, err)
		}
	}
	return nil
}

func nodeReady(n *corev1.Node) error {
	ready := false
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			ready = cond.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return fmt.Errorf("not Ready")
	}
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return fmt.Errorf("tainted %s:%s", t.Key, t.Effect)
		}
	}
	return nil
}
