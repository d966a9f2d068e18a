package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherproj/tether/api/codec"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

func init() { commands = append(commands, newGet) }

const getLong = `Shows objects stored in the hub: resource templates by their own kind
(tetherctl get deployments -n web) and Tether's policies.

KIND is a kind's plural, singular or short name (deployments, deployment,
deploy; propagationpolicies, pp), built in or defined by a
CustomResourceDefinition the hub holds or an API a member cluster reports
(guestbooks, guestbooks.webapp.my.domain), or Kind.version.group
(Guestbook.v1.webapp.my.domain). A name that fits several kinds is refused
with the candidates. KIND,KIND (deploy,pp) lists several kinds: a table
per kind with rows named kind.group/name, or one List. "get clusters" is "clusters",
except that -o json and -o yaml print cluster.tether.io/v1alpha1 Cluster
objects (metadata, spec with taints and resource models, status up to the
last heartbeat), as kubectl get clusters does on Karmada.

Templates come with the status the hub aggregated from the member
clusters. -o json and -o yaml print the stored objects (one object as
itself, several as a List); -o wide adds the clusters a template runs in
and the labels. As in kubectl, -o name prints kind.group/name,
-o jsonpath=TEMPLATE (or jsonpath-file=FILE) runs a JSONPath template over
the object or the List ('{.items[*].metadata.name}'), and -o
custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas prints a table
of the paths given. These work for get clusters too, over its Cluster
objects.

--watch (-w) lists, then prints a row for every change until interrupted
(Ctrl-C), with an EVENT column (ADDED, MODIFIED, DELETED); -o json and -o
yaml print each changed object. Templates' aggregated status is polled,
so READY follows the member clusters too.`

// getFlags are the options of get, shared by the commands that name
// objects the same way.
type getFlags struct {
	namespace     string
	allNamespaces bool
	selector      string
	output        string
	// watch streams changes after the list (watch.go).
	watch bool
	// kindPrefix names rows kind.group/name, as with several kinds
	// (get_many.go).
	kindPrefix bool
}

func newGet(s IO) *cobra.Command {
	var f getFlags
	var m memberFlags
	cmd := &cobra.Command{
		Use:   "get KIND [NAME] [-n NS] [-A] [-l SELECTOR] [-o table|wide|yaml|json|name|jsonpath=...|custom-columns=...] [-w]",
		Short: "show objects stored in the hub",
		Long:  getLong,
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(f.output, append([]string{formatTable, formatWide, formatJSON, formatYAML}, printerFormats...)...); err != nil {
				return err
			}
			if f.watch && isPrinterFormat(f.output) {
				return fmt.Errorf("get --watch -o %s: not supported; watch with -o json, yaml, table or wide", f.output)
			}
			if m.clusters != "" {
				if len(args) > 1 || f.watch || strings.Contains(args[0], ",") {
					return fmt.Errorf("get --clusters: one KIND, no NAME, no --watch")
				}
				return runGetMembers(contextOf(cmd), s, args[0], f, m)
			}
			if strings.Contains(args[0], ",") {
				return runGetMany(contextOf(cmd), s, strings.Split(args[0], ","), args[1:], f)
			}
			if isClusterKind(args[0]) && f.watch {
				return fmt.Errorf("get clusters --watch: not supported; run tetherctl clusters again to see changes")
			}
			if isClusterKind(args[0]) {
				return runClusters(contextOf(cmd), s, clustersFlags{selector: f.selector, output: f.output, objects: true}, args[1:])
			}
			k, err := resolveKind(contextOf(cmd), args[0])
			if err != nil {
				return err
			}
			if f.watch {
				return runGetWatch(contextOf(cmd), s, k, args[1:], f)
			}
			return runGet(contextOf(cmd), s, k, args[1:], f)
		},
	}
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", `namespace (default "default")`)
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "list across all namespaces")
	cmd.Flags().StringVarP(&f.selector, "selector", "l", "", "label selector, e.g. app=web,tier!=db")
	cmd.Flags().StringVarP(&f.output, "output", "o", formatTable, "output format: table, wide, yaml, json, name, jsonpath=TEMPLATE, jsonpath-file=FILE or custom-columns=HEADER:PATH,...")
	cmd.Flags().BoolVarP(&f.watch, "watch", "w", false, "after listing, stream changes until interrupted")
	cmd.Flags().StringVar(&m.clusters, "clusters", "", "read KIND from member clusters instead of the hub, through the hub's member proxy: all, or NAME,NAME; "+
		"one table with a CLUSTER column, a cluster that does not answer marked unreachable with its last heartbeat")
	cmd.Flags().StringVar(&m.proxy, "proxy", "", "with --clusters: the hub's member proxy address, host:port; default: the hub's host, port "+client.DefaultProxyPort)
	return cmd
}

// ns is the namespace to use: the flag, else "default".
func (f getFlags) ns() string {
	if f.namespace == "" {
		return "default"
	}
	return f.namespace
}

func runGet(ctx context.Context, s IO, k kindSpec, names []string, f getFlags) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	objs, err := fetchObjects(ctx, c, k, names, f)
	if err != nil {
		return err
	}
	if f.output == formatJSON || f.output == formatYAML || isPrinterFormat(f.output) {
		raw := make([]json.RawMessage, 0, len(objs))
		for _, o := range objs {
			raw = append(raw, o.GetObjectJson())
		}
		if isPrinterFormat(f.output) {
			return writeObjectsAs(s.Out, f.output, raw, len(names) == 1)
		}
		return writeObjects(s.Out, f.output, raw, len(names) == 1)
	}
	if len(objs) == 0 {
		where := " in namespace " + f.ns()
		if f.allNamespaces || !k.namespaced {
			where = ""
		}
		fmt.Fprintf(s.Err, "No %s found%s.\n", k.plural, where)
		return nil
	}
	return printObjects(ctx, s, k, objs, f, placesFor(c, k, f))
}

// placesFor is c when rows of k show where templates run (CLUSTERS, in
// wide output), else nil.
func placesFor(c *client.Client, k kindSpec, f getFlags) *client.Client {
	if f.output == formatWide && k.template {
		return c
	}
	return nil
}

// fetchObjects gets the named object, or lists the kind's.
func fetchObjects(ctx context.Context, c *client.Client, k kindSpec, names []string, f getFlags) ([]*hubv1.Object, error) {
	if len(names) == 0 {
		objs, _, err := c.List(ctx, f.selection(k), 0)
		return objs, err
	}
	o, err := c.Get(ctx, k.ref(f.ns(), names[0]))
	if err != nil {
		return nil, err
	}
	return []*hubv1.Object{o}, nil
}

// selection is what get lists and watches of kind k: the -l selector, in
// the namespace unless -A or the kind is cluster-scoped.
func (f getFlags) selection(k kindSpec) client.Selector {
	sel := client.Selector{APIVersion: k.apiVersion, Kind: k.kind, LabelSelector: f.selector}
	if k.namespaced && !f.allNamespaces {
		sel.Namespace = f.ns()
	}
	return sel
}

// meta is what the tables show of an object.
type meta struct {
	Metadata struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		Labels            map[string]string `json:"labels"`
		CreationTimestamp time.Time         `json:"creationTimestamp"`
	} `json:"metadata"`
	Spec struct {
		Replicas *int64 `json:"replicas"`
	} `json:"spec"`
	Status struct {
		ReadyReplicas int64 `json:"readyReplicas"`
	} `json:"status"`
}

// printObjects writes the objects as a table: NAMESPACE (with -A), NAME,
// READY for kinds with replicas, AGE; -o wide adds CLUSTERS (templates)
// and LABELS.
func printObjects(ctx context.Context, s IO, k kindSpec, objs []*hubv1.Object, f getFlags, places *client.Client) error {
	t := newTable(s.Out, tableHeader(k, f, places != nil)...)
	now := time.Now()
	for _, o := range objs {
		t.row(tableRow(ctx, k, o, f, places, now)...)
	}
	return t.flush()
}

// tableHeader is the header of printObjects' table; withClusters adds
// CLUSTERS in wide output.
func tableHeader(k kindSpec, f getFlags, withClusters bool) []string {
	var header []string
	if f.allNamespaces && k.namespaced {
		header = append(header, "NAMESPACE")
	}
	header = append(header, "NAME")
	if k.replicated {
		header = append(header, "READY")
	}
	header = append(header, "AGE")
	wide := f.output == formatWide
	if wide && withClusters {
		header = append(header, "CLUSTERS")
	}
	if wide {
		header = append(header, "LABELS")
	}
	return header
}

// tableRow is one object's row under tableHeader.
func tableRow(ctx context.Context, k kindSpec, o *hubv1.Object, f getFlags, places *client.Client, now time.Time) []string {
	var m meta
	_ = json.Unmarshal(o.GetObjectJson(), &m) // the hub stored it as JSON
	var row []string
	if f.allNamespaces && k.namespaced {
		row = append(row, m.Metadata.Namespace)
	}
	if f.kindPrefix {
		row = append(row, k.resourceName()+"/"+m.Metadata.Name)
	} else {
		row = append(row, m.Metadata.Name)
	}
	if k.replicated {
		want := int64(0)
		if m.Spec.Replicas != nil {
			want = *m.Spec.Replicas
		}
		row = append(row, fmt.Sprintf("%d/%d", m.Status.ReadyReplicas, want))
	}
	row = append(row, age(m.Metadata.CreationTimestamp, now))
	wide := f.output == formatWide
	if wide && places != nil {
		row = append(row, placedClusters(ctx, places, o.GetRef()))
	}
	if wide {
		row = append(row, labelString(m.Metadata.Labels))
	}
	return row
}

// placedClusters renders where a template runs as "m1:3,m2:2"; "<none>"
// when nowhere and "?" when the placement cannot be read.
func placedClusters(ctx context.Context, places *client.Client, ref *hubv1.ObjectRef) string {
	pl, err := places.GetPlacement(ctx, ref)
	if err != nil {
		return "?"
	}
	var parts []string
	for _, c := range pl.GetClusters() {
		parts = append(parts, fmt.Sprintf("%s:%d", c.GetCluster(), c.GetReplicas()))
	}
	return orNone(strings.Join(parts, ","))
}

// kindSpec is what tetherctl knows of a kind to name its objects.
type kindSpec struct {
	apiVersion, kind, plural string
	namespaced               bool
	// template: a resource template (placed by policies), not one of
	// Tether's own kinds.
	template bool
	// replicated: objects have spec.replicas and status.readyReplicas.
	replicated bool
}

// ref names an object of the kind; namespace is dropped for cluster-scoped
// kinds.
func (k kindSpec) ref(namespace, name string) *hubv1.ObjectRef {
	if !k.namespaced {
		namespace = ""
	}
	return &hubv1.ObjectRef{ApiVersion: k.apiVersion, Kind: k.kind, Namespace: namespace, Name: name}
}

// builtin kinds tetherctl resolves by name, with kubectl's short names.
var builtinKindSpecs = []struct {
	apiVersion, kind string
	namespaced       bool
	short            []string
}{
	{"v1", "Pod", true, []string{"po"}}, {"v1", "Service", true, []string{"svc"}},
	{"v1", "ConfigMap", true, []string{"cm"}}, {"v1", "Secret", true, nil},
	{"v1", "ServiceAccount", true, []string{"sa"}}, {"v1", "PersistentVolumeClaim", true, []string{"pvc"}},
	{"v1", "Endpoints", true, []string{"ep"}}, {"v1", "LimitRange", true, []string{"limits"}},
	{"v1", "ResourceQuota", true, []string{"quota"}}, {"v1", "ReplicationController", true, []string{"rc"}},
	{"v1", "Namespace", false, []string{"ns"}}, {"v1", "Node", false, []string{"no"}},
	{"v1", "PersistentVolume", false, []string{"pv"}},
	{"apps/v1", "Deployment", true, []string{"deploy"}}, {"apps/v1", "StatefulSet", true, []string{"sts"}},
	{"apps/v1", "DaemonSet", true, []string{"ds"}}, {"apps/v1", "ReplicaSet", true, []string{"rs"}},
	{"batch/v1", "Job", true, nil}, {"batch/v1", "CronJob", true, []string{"cj"}},
	{"autoscaling/v2", "HorizontalPodAutoscaler", true, []string{"hpa"}},
	{"policy/v1", "PodDisruptionBudget", true, []string{"pdb"}},
	{"networking.k8s.io/v1", "Ingress", true, []string{"ing"}},
	{"networking.k8s.io/v1", "NetworkPolicy", true, []string{"netpol"}},
	{"networking.k8s.io/v1", "IngressClass", false, nil},
	{"rbac.authorization.k8s.io/v1", "Role", true, nil}, {"rbac.authorization.k8s.io/v1", "RoleBinding", true, nil},
	{"rbac.authorization.k8s.io/v1", "ClusterRole", false, nil},
	{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", false, nil},
	{"storage.k8s.io/v1", "StorageClass", false, []string{"sc"}},
	{"scheduling.k8s.io/v1", "PriorityClass", false, []string{"pc"}},
	{"apiextensions.k8s.io/v1", "CustomResourceDefinition", false, []string{"crd", "crds"}},
}

// Short names of Tether's kinds, as Karmada's CLI has them.
var ownShortNames = map[string][]string{
	"PropagationPolicy": {"pp"}, "ClusterPropagationPolicy": {"cpp"},
	"OverridePolicy": {"op"}, "ClusterOverridePolicy": {"cop"},
	"FederatedResourceQuota":                  {"frq"},
	"ResourceInterpreterCustomization":        {"ric"},
	"ResourceInterpreterWebhookConfiguration": {"riwc"},
	"ResourceBinding":                         {"rb"}, "ClusterResourceBinding": {"crb"},
}

// replicatedKinds have spec.replicas and status.readyReplicas.
var replicatedKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "ReplicaSet": true}

// kindsByName maps every accepted lower-case name to its kind.
var kindsByName = func() map[string]kindSpec {
	out := map[string]kindSpec{}
	add := func(k kindSpec, short []string) {
		k.plural = plural(k.kind)
		for _, n := range append([]string{strings.ToLower(k.kind), k.plural}, short...) {
			out[n] = k
		}
	}
	for _, b := range builtinKindSpecs {
		add(kindSpec{apiVersion: b.apiVersion, kind: b.kind, namespaced: b.namespaced, template: true,
			replicated: replicatedKinds[b.kind]}, b.short)
	}
	for _, info := range codec.Kinds() {
		if info.GVK.Kind == "Cluster" { // served by ClusterService: see isClusterKind
			continue
		}
		add(kindSpec{apiVersion: info.GVK.GroupVersion().String(), kind: info.GVK.Kind, namespaced: info.Namespaced},
			ownShortNames[info.GVK.Kind])
	}
	return out
}()

// plural is the lower-case plural of a kind, as Kubernetes names
// resources.
func plural(kind string) string {
	l := strings.ToLower(kind)
	switch {
	case l == "endpoints":
		return l
	case strings.HasSuffix(l, "s"), strings.HasSuffix(l, "x"), strings.HasSuffix(l, "ch"), strings.HasSuffix(l, "sh"):
		return l + "es"
	case strings.HasSuffix(l, "y") && !strings.ContainsRune("aeiou", rune(l[len(l)-2])):
		return l[:len(l)-1] + "ies"
	}
	return l + "s"
}

// isClusterKind reports whether name means member clusters.
func isClusterKind(name string) bool {
	switch strings.ToLower(name) {
	case "cluster", "clusters":
		return true
	}
	return false
}

// parseKindName splits "KIND/NAME" (deployment/web).
func parseKindName(ctx context.Context, arg string) (kindSpec, string, error) {
	kind, name, ok := strings.Cut(arg, "/")
	if !ok || kind == "" || name == "" {
		return kindSpec{}, "", fmt.Errorf("%q: want KIND/NAME, e.g. deployment/web", arg)
	}
	k, err := resolveKind(ctx, kind)
	return k, name, err
}
