package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// caseDir is the project's copy of the placement conformance cases.
const caseDir = "../../api/policy/v1alpha1/testdata/conformance/placement/schedule"

// schedCase is one schedule conformance case file.
type schedCase struct {
	Name        string `json:"name"`
	Conformance string `json:"conformance"`
	Input       struct {
		Placement     json.RawMessage `json:"placement"`
		ApplyDefaults *bool           `json:"applyDefaults"`
		Clusters      []caseCluster   `json:"clusters"`
		Workload      caseWorkload    `json:"workload"`
		Previous      casePrevious    `json:"previous"`
		EnableEmpty   bool            `json:"enableEmptyWorkloadPropagation"`
	} `json:"input"`
	Expected struct {
		Clusters  []caseTarget `json:"clusters"`
		Error     string       `json:"error"`
		ErrorType string       `json:"errorType"`
	} `json:"expected"`
	Karmada struct {
		Clusters map[string]struct {
			Filter map[string]string `json:"filter"`
		} `json:"clusters"`
	} `json:"karmada"`
}

type caseCluster struct {
	Name              string                           `json:"name"`
	Labels            map[string]string                `json:"labels"`
	Taints            []corev1.Taint                   `json:"taints"`
	Provider          string                           `json:"provider"`
	Region            string                           `json:"region"`
	Zone              string                           `json:"zone"`
	Zones             []string                         `json:"zones"`
	AvailableReplicas *int32                           `json:"availableReplicas"`
	ResourceSummary   *clusterv1alpha1.ResourceSummary `json:"resourceSummary"`
	ResourceModels    []clusterv1alpha1.ResourceModel  `json:"resourceModels"`
	APIEnabled        *bool                            `json:"apiEnabled"`
	Deleting          bool                             `json:"deleting"`
}

type caseWorkload struct {
	APIVersion      string              `json:"apiVersion"`
	Kind            string              `json:"kind"`
	Namespace       string              `json:"namespace"`
	Name            string              `json:"name"`
	UID             string              `json:"uid"`
	Replicas        int32               `json:"replicas"`
	ResourceRequest corev1.ResourceList `json:"resourceRequest"`
}

type casePrevious struct {
	Clusters              []caseTarget `json:"clusters"`
	ObservedAffinityName  string       `json:"observedAffinityName"`
	GracefulEvictionTasks []struct {
		FromCluster string `json:"fromCluster"`
	} `json:"gracefulEvictionTasks"`
	RescheduleTriggered bool `json:"rescheduleTriggered"`
}

type caseTarget struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
}

// loadCases reads every case file of the directory, sorted by name.
func loadCases(t *testing.T) []schedCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(caseDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schedule cases in %s (err %v)", caseDir, err)
	}
	sort.Strings(files)
	cases := make([]schedCase, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c schedCase
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatalf("decode %s: %v", f, err)
		}
		cases = append(cases, c)
	}
	return cases
}

// loadCase reads one case by name.
func loadCase(t *testing.T, name string) schedCase {
	t.Helper()
	for _, c := range loadCases(t) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("case %s not found in %s", name, caseDir)
	return schedCase{}
}

// input builds the scheduler input of a case, applying API defaults
// unless the case says not to.
func (c *schedCase) input(t *testing.T) Input {
	t.Helper()
	var p policyv1alpha1.Placement
	dec := json.NewDecoder(bytes.NewReader(c.Input.Placement))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("decode placement of %s: %v", c.Name, err)
	}
	if c.Input.ApplyDefaults == nil || *c.Input.ApplyDefaults {
		p.SetDefaults()
	}
	in := Input{Placement: p, EnableEmptyWorkloadPropagation: c.Input.EnableEmpty}
	for _, cc := range c.Input.Clusters {
		in.Clusters = append(in.Clusters, Cluster{
			Name: cc.Name, Labels: cc.Labels, Taints: cc.Taints,
			Provider: cc.Provider, Region: cc.Region, Zone: cc.Zone, Zones: cc.Zones,
			AvailableReplicas: cc.AvailableReplicas, ResourceSummary: cc.ResourceSummary,
			ResourceModels: cc.ResourceModels,
			APIEnabled:     cc.APIEnabled == nil || *cc.APIEnabled, Deleting: cc.Deleting,
		})
	}
	w := c.Input.Workload
	in.Workload = Workload{APIVersion: w.APIVersion, Kind: w.Kind, Namespace: w.Namespace,
		Name: w.Name, UID: w.UID, Replicas: w.Replicas}
	if len(w.ResourceRequest) > 0 {
		in.Workload.Requirements = &configv1alpha1.ReplicaRequirements{ResourceRequest: w.ResourceRequest}
	}
	prev := c.Input.Previous
	in.Previous = Previous{ObservedAffinityName: prev.ObservedAffinityName, RescheduleTriggered: prev.RescheduleTriggered}
	for _, tc := range prev.Clusters {
		in.Previous.Clusters = append(in.Previous.Clusters, TargetCluster(tc))
	}
	for _, task := range prev.GracefulEvictionTasks {
		in.Previous.EvictingClusters = append(in.Previous.EvictingClusters, task.FromCluster)
	}
	return in
}

// sortedTargets returns targets sorted by name, zero replicas kept.
func sortedTargets(ts []TargetCluster) []TargetCluster {
	out := append([]TargetCluster{}, ts...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// expectedTargets is the case's expected clusters as targets.
func (c *schedCase) expectedTargets() []TargetCluster {
	out := []TargetCluster{}
	for _, e := range c.Expected.Clusters {
		out = append(out, TargetCluster(e))
	}
	return sortedTargets(out)
}

// errorType names the type of a Schedule error as the cases do.
func errorType(err error) string {
	var fit *FitError
	var u *UnschedulableError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &fit):
		return "FitError"
	case errors.As(err, &u):
		return "UnschedulableError"
	}
	return "Error"
}

// rejectedByKarmada lists the clusters Karmada's filters turned down.
func (c *schedCase) rejectedByKarmada() []string {
	var out []string
	for name, info := range c.Karmada.Clusters {
		for _, v := range info.Filter {
			if v != "Success" {
				out = append(out, name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// withoutNames removes the " (cluster names)" Tether adds to a FitError.
func withoutNames(msg string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(msg); i++ {
		switch {
		case msg[i] == ' ' && i+1 < len(msg) && msg[i+1] == '(' && depth == 0:
			depth = 1
			i++
		case depth > 0 && msg[i] == '(':
			depth++
		case depth > 0 && msg[i] == ')':
			depth--
		case depth == 0:
			b.WriteByte(msg[i])
		}
	}
	return b.String()
}
