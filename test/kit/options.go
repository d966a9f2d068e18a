package kit

import (
	"fmt"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Options describes an environment to start.
type Options struct {
	// Clusters to start, in parallel. Empty means Members(1).
	Clusters []ClusterSpec

	// Dir receives etcd's data, each cluster's certificates, kubeconfig and
	// configuration, and every process's log. Empty means a new temporary
	// directory that Stop removes; a given Dir is left in place.
	Dir string

	// Logger receives the kit's own progress messages (not the processes'
	// output, which goes to log files under Dir). Nil discards them.
	Logger hclog.Logger

	// BinDir overrides where the binaries are found; see BinDir.
	BinDir string

	// ExtraArgs adds command-line flags per binary name ("kube-apiserver",
	// "kube-controller-manager", "kube-scheduler", "kwok", "etcd"), after the
	// kit's own, so a later flag overrides the kit's where the binary allows
	// repeating it (the Kubernetes binaries do: the last value wins).
	ExtraArgs map[string][]string
}

// ClusterSpec describes one member cluster.
type ClusterSpec struct {
	// Name is a DNS-1123 label, unique within the Env. It names the
	// kubeconfig's context and the cluster's directory under Options.Dir.
	Name string

	// Labels are not applied anywhere in the cluster; they are carried on
	// Cluster.Labels for tests that register the cluster with a hub.
	Labels map[string]string

	// Nodes are the kwok nodes created in the cluster. Empty means one
	// DefaultNode.
	Nodes []NodeSpec

	// KubeletServer makes kwok serve its nodes' kubelet API on a port of
	// 127.0.0.1, so that the real API server path of `kubectl logs`,
	// `exec` and `port-forward` works for the fake pods: logs are the file
	// Cluster.LogsPath, exec runs the command on this machine,
	// port-forward echoes (kubelet.go).
	KubeletServer bool
}

// NodeSpec describes one fake node. Quantities use Kubernetes syntax.
type NodeSpec struct {
	Name   string
	CPU    string // e.g. "32"; empty means DefaultNode's
	Memory string // e.g. "64Gi"; empty means DefaultNode's
	Pods   string // pod capacity, e.g. "110"; empty means DefaultNode's

	// Labels are added to the standard ones (kubernetes.io/hostname,
	// kubernetes.io/os, kubernetes.io/arch, type=kwok); they may override them.
	Labels map[string]string
	Taints []corev1.Taint
}

// DefaultNode is the node a cluster gets when its spec lists none, and the
// source of the quantities a NodeSpec leaves empty.
var DefaultNode = NodeSpec{Name: "node-1", CPU: "32", Memory: "64Gi", Pods: "110"}

// Members returns specs for n clusters named member-1 … member-n, each with
// one DefaultNode and the label tether.io/member=<name>.
func Members(n int) []ClusterSpec {
	specs := make([]ClusterSpec, n)
	for i := range specs {
		name := fmt.Sprintf("member-%d", i+1)
		specs[i] = ClusterSpec{Name: name, Labels: map[string]string{"tether.io/member": name}}
	}
	return specs
}

// clusterSpecs validates the options' cluster specs and fills in defaults.
func (o Options) clusterSpecs() ([]ClusterSpec, error) {
	specs := o.Clusters
	if len(specs) == 0 {
		specs = Members(1)
	}
	out := make([]ClusterSpec, len(specs))
	seen := map[string]bool{}
	for i, s := range specs {
		if errs := validation.IsDNS1123Label(s.Name); len(errs) > 0 {
			return nil, fmt.Errorf("kit: cluster name %q: %v", s.Name, errs)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("kit: cluster name %q used twice", s.Name)
		}
		seen[s.Name] = true
		if len(s.Nodes) == 0 {
			s.Nodes = []NodeSpec{DefaultNode}
		}
		nodes, err := nodeSpecs(s.Nodes)
		if err != nil {
			return nil, fmt.Errorf("kit: cluster %s: %w", s.Name, err)
		}
		s.Nodes = nodes
		out[i] = s
	}
	return out, nil
}

// nodeSpecs validates node specs and fills in DefaultNode's quantities.
func nodeSpecs(specs []NodeSpec) ([]NodeSpec, error) {
	out := make([]NodeSpec, len(specs))
	seen := map[string]bool{}
	for i, n := range specs {
		if errs := validation.IsDNS1123Subdomain(n.Name); len(errs) > 0 {
			return nil, fmt.Errorf("node name %q: %v", n.Name, errs)
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("node name %q used twice", n.Name)
		}
		seen[n.Name] = true
		n.CPU = or(n.CPU, DefaultNode.CPU)
		n.Memory = or(n.Memory, DefaultNode.Memory)
		n.Pods = or(n.Pods, DefaultNode.Pods)
		if _, err := n.resources(); err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		out[i] = n
	}
	return out, nil
}

// resources returns the node's capacity (which is also its allocatable).
func (n NodeSpec) resources() (corev1.ResourceList, error) {
	list := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{
		corev1.ResourceCPU:    n.CPU,
		corev1.ResourceMemory: n.Memory,
		corev1.ResourcePods:   n.Pods,
	} {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", name, v, err)
		}
		list[name] = q
	}
	return list, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
