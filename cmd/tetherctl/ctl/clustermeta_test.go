package ctl_test

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// clusterObject is what the tests read of get cluster -o yaml.
type clusterObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name            string            `json:"name"`
		Labels          map[string]string `json:"labels"`
		Annotations     map[string]string `json:"annotations"`
		ResourceVersion string            `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		Region string `json:"region"`
		Taints []struct {
			Key, Value, Effect string
		} `json:"taints"`
	} `json:"spec"`
	Status struct {
		ResourceSummary struct {
			Allocatable map[string]string `json:"allocatable"`
		} `json:"resourceSummary"`
	} `json:"status"`
}

func getClusterYAML(t *testing.T, conf, name string) clusterObject {
	t.Helper()
	var c clusterObject
	out := mustRun(t, conf, "get", "cluster", name, "-o", "yaml")
	if err := yaml.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("get cluster %s -o yaml = %q: %v", name, out, err)
	}
	return c
}

func TestLabelAnnotateCluster(t *testing.T) {
	h := startOnlineHub(t)
	h.putClusters(t)
	steps := []struct {
		args []string
		out  string
	}{
		{[]string{"label", "cluster", "m1", "tier=edge", "gpu=true"}, "cluster/m1 labeled\n"},
		{[]string{"label", "cluster/m1", "gpu-"}, "cluster/m1 labeled\n"},
		{[]string{"label", "clusters", "m1", "env=staging", "--overwrite"}, "cluster/m1 labeled\n"},
		{[]string{"annotate", "cluster", "m1", "owner=team-a", "note=edge site in Lyon"}, "cluster/m1 annotated\n"},
		{[]string{"annotate", "cluster", "m1", "note-"}, "cluster/m1 annotated\n"},
		{[]string{"taint", "cluster", "m1", "dedicated=gpu:NoSchedule"}, "cluster/m1 tainted: dedicated=gpu:NoSchedule\n"},
	}
	for _, st := range steps {
		if out := mustRun(t, h.admin, st.args...); out != st.out {
			t.Errorf("tetherctl %v = %q; want %q", st.args, out, st.out)
		}
	}
	c := getClusterYAML(t, h.viewer, "m1")
	if c.APIVersion != "cluster.tether.io/v1alpha1" || c.Kind != "Cluster" || c.Metadata.Name != "m1" {
		t.Errorf("get cluster m1 -o yaml = %s %s %s; want a cluster.tether.io/v1alpha1 Cluster m1", c.APIVersion, c.Kind, c.Metadata.Name)
	}
	if got := labelsOf(c.Metadata.Labels); got != "env=staging,tier=edge" {
		t.Errorf("get cluster m1 labels = %s; want env=staging,tier=edge", got)
	}
	if got := labelsOf(c.Metadata.Annotations); got != "owner=team-a" {
		t.Errorf("get cluster m1 annotations = %s; want owner=team-a", got)
	}
	if len(c.Spec.Taints) != 1 || c.Spec.Taints[0].Key != "dedicated" || c.Spec.Region != "eu" {
		t.Errorf("get cluster m1 spec = %+v; want region eu, taint dedicated", c.Spec)
	}
	if got := c.Status.ResourceSummary.Allocatable["cpu"]; got != "8" {
		t.Errorf("get cluster m1 status allocatable cpu = %q; want 8 (from the heartbeat)", got)
	}
	if c.Metadata.ResourceVersion == "" {
		t.Errorf("get cluster m1 resourceVersion is empty; want the record's revision")
	}

	desc := mustRun(t, h.viewer, "describe", "cluster", "m1")
	for _, want := range []string{"Name:         m1\n", "Labels:       env=staging,tier=edge\n", "Annotations:  owner=team-a\n",
		"State:        Ready\n", "Taints:       dedicated=gpu:NoSchedule\n", "Resource Models: <none>\n"} {
		if !strings.Contains(desc, want) {
			t.Errorf("describe cluster m1 =\n%s\nwant it to contain %q", desc, want)
		}
	}
	if got := spaces.ReplaceAllString(desc, " "); !strings.Contains(got, " cpu 8 - -\n") {
		t.Errorf("describe cluster m1 =\n%s\nwant a capacity row cpu 8 - -", desc)
	}
	if out := mustRun(t, h.viewer, "get", "clusters", "-l", "tier=edge"); !strings.Contains(out, "m1") || strings.Contains(out, "m2") {
		t.Errorf("get clusters -l tier=edge =\n%s\nwant m1 only", out)
	}

	for _, tc := range []struct {
		conf string
		args []string
		want string
	}{
		{h.admin, []string{"label", "cluster", "m1", "env=prod"}, "overwrite is false"},
		{h.admin, []string{"label", "cluster", "m1", "bad key=x"}, "invalid request: "},
		{h.admin, []string{"label", "cluster", "m1", "k=not valid!"}, "invalid request: "},
		{h.admin, []string{"label", "cluster", "m1", "k=v", "--resource-version", "1"}, "is at revision"},
		{h.admin, []string{"label", "cluster", "nope", "k=v"}, "cluster nope is not registered"},
		{h.admin, []string{"label", "deployment", "web", "k=v"}, "only clusters"},
		{h.admin, []string{"label", "cluster", "m1", "novalue"}, "want KEY=VALUE"},
		{h.viewer, []string{"label", "cluster", "m1", "k=v"}, `permission denied for user "victor"`},
		{h.viewer, []string{"annotate", "cluster", "m1", "k=v"}, `permission denied for user "victor"`},
		{h.admin, []string{"describe", "cluster", "nope"}, "cluster nope is not registered"},
	} {
		code, _, errOut := runWith(t, tc.conf, "", tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("tetherctl %v = %d, stderr %q; want 1 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if got := labelsOf(getClusterYAML(t, h.viewer, "m1").Metadata.Labels); got != "env=staging,tier=edge" {
		t.Errorf("after refused changes, labels = %s; want env=staging,tier=edge unchanged", got)
	}
	rv := getClusterYAML(t, h.viewer, "m1").Metadata.ResourceVersion
	if out := mustRun(t, h.admin, "label", "cluster", "m1", "k=v", "--resource-version", rv); out != "cluster/m1 labeled\n" {
		t.Errorf("label at the current resourceVersion = %q; want labeled", out)
	}
}

func labelsOf(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// TestGetDescribeCluster: get cluster -o yaml prints a Kubernetes-shaped
// Cluster with the heartbeat's status, describe cluster the cluster.
func TestGetDescribeCluster(t *testing.T) {
	h := startOnlineHub(t)
	h.putClusters(t)
	c := getClusterYAML(t, h.viewer, "m3")
	if c.Kind != "Cluster" || len(c.Spec.Taints) != 1 || c.Spec.Region != "us" || labelsOf(c.Metadata.Labels) != "env=prod" {
		t.Errorf("get cluster m3 -o yaml = %+v; want a Cluster with region us, env=prod and taint dedicated", c)
	}
	out := mustRun(t, h.viewer, "get", "clusters", "-o", "json")
	var list struct {
		Kind  string          `json:"kind"`
		Items []clusterObject `json:"items"`
	}
	if err := yaml.Unmarshal([]byte(out), &list); err != nil || list.Kind != "List" || len(list.Items) != 3 || list.Items[0].Kind != "Cluster" {
		t.Errorf("get clusters -o json = %s (%v); want a List of 3 Clusters", out, err)
	}
	if out := mustRun(t, h.viewer, "clusters", "-o", "json"); strings.Contains(out, "objectJson") {
		t.Errorf("clusters -o json carries the Cluster objects; want only the views (ListClusters without with_objects)")
	}
	desc := mustRun(t, h.viewer, "describe", "cluster", "m3")
	for _, want := range []string{"Name:         m3\n", "State:        Unknown\n", "Taints:       dedicated=gpu:NoSchedule\n", "Region:       us\n"} {
		if !strings.Contains(desc, want) {
			t.Errorf("describe cluster m3 =\n%s\nwant it to contain %q", desc, want)
		}
	}
}

// TestClusterModels: cluster models sets spec.resourceModels from a
// Karmada Cluster manifest, shown by get and describe; invalid models are
// refused naming the field; --clear removes them.
func TestClusterModels(t *testing.T) {
	h := startOnlineHub(t)
	h.putClusters(t)
	file := writeTemp(t, "models.yaml", []byte(`apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: m1}
spec:
  resourceModels:
  - grade: 1
    ranges:
    - {name: cpu, min: 4, max: 64}
    - {name: memory, min: 16Gi, max: 256Gi}
  - grade: 0
    ranges:
    - {name: cpu, min: 0, max: 4}
    - {name: memory, min: "0", max: 16Gi}
`))
	if out := mustRun(t, h.admin, "cluster", "models", "m1", "-f", file); out != "cluster/m1 resource models set: 2 grades\n" {
		t.Errorf("cluster models m1 = %q", out)
	}
	var c struct {
		Spec struct {
			ResourceModels []struct {
				Grade  int `json:"grade"`
				Ranges []struct{ Name, Min, Max string }
			} `json:"resourceModels"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(mustRun(t, h.viewer, "get", "cluster", "m1", "-o", "yaml")), &c); err != nil {
		t.Fatal(err)
	}
	if m := c.Spec.ResourceModels; len(m) != 2 || m[0].Grade != 0 || m[1].Ranges[1].Min != "16Gi" || m[1].Ranges[0].Max != "64" {
		t.Errorf("get cluster m1 spec.resourceModels = %+v; want grades 0 and 1, sorted", m)
	}
	desc := spaces.ReplaceAllString(mustRun(t, h.viewer, "describe", "cluster", "m1"), " ")
	if !strings.Contains(desc, " 1 cpu [4, 64), memory [16Gi, 256Gi)\n") {
		t.Errorf("describe cluster m1 =\n%s\nwant grade 1's ranges", desc)
	}
	gap := writeTemp(t, "gap.yaml", []byte("- {grade: 0, ranges: [{name: cpu, min: 0, max: 4}]}\n- {grade: 1, ranges: [{name: cpu, min: 8, max: 16}]}\n"))
	if code, _, errOut := runWith(t, h.admin, "", "cluster", "models", "m1", "-f", gap); code != 1 || !strings.Contains(errOut, "spec.resourceModels[1].ranges[0].min") {
		t.Errorf("cluster models with a gap = %d, %q; want the field named", code, errOut)
	}
	if code, _, errOut := runWith(t, h.viewer, "", "cluster", "models", "m1", "--clear"); code != 1 || !strings.Contains(errOut, "permission denied") {
		t.Errorf("cluster models as viewer = %d, %q; want permission denied", code, errOut)
	}
	mustRun(t, h.admin, "cluster", "models", "m1", "--clear")
	if desc := mustRun(t, h.viewer, "describe", "cluster", "m1"); !strings.Contains(desc, "Resource Models: <none>") {
		t.Errorf("after --clear, describe cluster m1 =\n%s", desc)
	}
}
