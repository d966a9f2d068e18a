package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// clusterSpecView is what describe cluster reads of a Cluster object's
// spec that the hub's view does not carry.
type clusterSpecView struct {
	Spec struct {
		ResourceModels []struct {
			Grade  uint `json:"grade"`
			Ranges []struct {
				Name string `json:"name"`
				Min  string `json:"min"`
				Max  string `json:"max"`
			} `json:"ranges"`
		} `json:"resourceModels"`
	} `json:"spec"`
}

// runDescribeCluster prints one member cluster as kubectl describe node
// would.
func runDescribeCluster(ctx context.Context, s IO, name string) error {
	hub, err := dial(ctx)
	if err != nil {
		return err
	}
	defer hub.Close()
	resp, err := hub.GetCluster(ctx, name)
	if err != nil {
		return err
	}
	c := resp.GetCluster()
	var obj clusterSpecView
	if len(c.GetObjectJson()) > 0 {
		if err := json.Unmarshal(c.GetObjectJson(), &obj); err != nil {
			return fmt.Errorf("decode cluster %s: %w", name, err)
		}
	}
	w := s.Out
	describeClusterHead(w, c)
	describeClusterSpec(w, c, obj)
	describeClusterStatus(w, c, resp.GetApiEnablements())
	return nil
}

func describeClusterHead(w io.Writer, c *hubv1.Cluster) {
	fmt.Fprintf(w, "Name:         %s\n", c.GetName())
	fmt.Fprintf(w, "Kind:         Cluster (cluster.tether.io/v1alpha1)\n")
	fmt.Fprintf(w, "Labels:       %s\n", labelString(c.GetLabels()))
	fmt.Fprintf(w, "Annotations:  %s\n", labelString(c.GetAnnotations()))
	if t := c.GetRegisterTime(); t != nil {
		fmt.Fprintf(w, "Created:      %s (%s ago)\n", t.AsTime().UTC().Format(time.RFC3339), age(t.AsTime(), time.Now()))
	}
	fmt.Fprintf(w, "Revision:     %d\n", c.GetResourceVersion())
	fmt.Fprintf(w, "State:        %s\n", clusterState(c))
	fmt.Fprintf(w, "Connected:    %t\n", c.GetConnected())
	fmt.Fprintf(w, "Lease age:    %s\n", leaseAge(c))
	fmt.Fprintf(w, "Agent:        %s\n", orDash(c.GetAgentVersion()))
	fmt.Fprintf(w, "Kubernetes:   %s\n", orDash(c.GetKubernetesVersion()))
	fmt.Fprintf(w, "Provider:     %s\n", orDash(c.GetProvider()))
	fmt.Fprintf(w, "Region:       %s\n", orDash(c.GetRegion()))
	fmt.Fprintf(w, "Zones:        %s\n", orNone(strings.Join(c.GetZones(), ",")))
}

func describeClusterSpec(w io.Writer, c *hubv1.Cluster, obj clusterSpecView) {
	fmt.Fprintf(w, "Taints:       %s\n", taintString(c.GetTaints()))
	if len(obj.Spec.ResourceModels) == 0 {
		fmt.Fprintln(w, "Resource Models: <none>")
		return
	}
	fmt.Fprintln(w, "Resource Models:")
	t := newTable(&indented{w: w}, "GRADE", "RANGES")
	for _, m := range obj.Spec.ResourceModels {
		var parts []string
		for _, r := range m.Ranges {
			parts = append(parts, fmt.Sprintf("%s [%s, %s)", r.Name, r.Min, r.Max))
		}
		t.row(fmt.Sprint(m.Grade), strings.Join(parts, ", "))
	}
	_ = t.flush()
}

func describeClusterStatus(w io.Writer, c *hubv1.Cluster, apis []*hubv1.APIGroupVersion) {
	capa := c.GetCapacity()
	fmt.Fprintln(w, "Capacity:")
	if capa == nil {
		fmt.Fprintln(w, "  <none reported>")
	} else {
		t := newTable(&indented{w: w}, "RESOURCE", "ALLOCATABLE", "ALLOCATED", "ALLOCATING")
		names := map[string]bool{}
		for _, m := range []map[string]string{capa.GetAllocatable(), capa.GetAllocated(), capa.GetAllocating()} {
			for k := range m {
				names[k] = true
			}
		}
		for _, n := range slices.Sorted(maps.Keys(names)) {
			t.row(n, orDash(capa.GetAllocatable()[n]), orDash(capa.GetAllocated()[n]), orDash(capa.GetAllocating()[n]))
		}
		_ = t.flush()
	}
	fmt.Fprintln(w, "Conditions:")
	if len(c.GetConditions()) == 0 {
		fmt.Fprintln(w, "  <none>")
	} else {
		t := newTable(&indented{w: w}, "TYPE", "STATUS", "REASON", "MESSAGE")
		for _, cond := range c.GetConditions() {
			t.row(cond.GetType(), cond.GetStatus(), orDash(cond.GetReason()), orDash(cond.GetMessage()))
		}
		_ = t.flush()
	}
	kinds := 0
	for _, gv := range apis {
		kinds += len(gv.GetKinds())
	}
	fmt.Fprintf(w, "APIs:         %d kinds in %d group versions\n", kinds, len(apis))
	if p := c.GetPendingKeyFingerprint(); p != "" {
		fmt.Fprintf(w, "Pending key:  %s (tetherctl cluster approve %s --key-fingerprint %s)\n", p, c.GetName(), p)
	}
}
