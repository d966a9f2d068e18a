package main

import (
	"flag"
	"fmt"
	"strings"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// topologyFlags registers --provider, --region, --zones and --labels on fs
// and returns the function that builds the topology once fs is parsed
// (nil when none is set).
func topologyFlags(fs *flag.FlagSet) func() (*agentv1.Topology, error) {
	provider := fs.String("provider", "", "the cluster's provider, e.g. aws; policies select it with fieldSelector provider")
	region := fs.String("region", "", "the cluster's region; policies select it with fieldSelector region and spread by region")
	zones := fs.String("zones", "", "comma-separated zones of the cluster's nodes")
	labels := fs.String("labels", "", "comma-separated key=value labels for the cluster's record, set when the hub first records the cluster")
	return func() (*agentv1.Topology, error) {
		l, err := parseLabels(*labels)
		if err != nil {
			return nil, err
		}
		t := &agentv1.Topology{Provider: *provider, Region: *region, Zones: splitList(*zones), Labels: l}
		if t.Provider == "" && t.Region == "" && len(t.Zones) == 0 && len(t.Labels) == 0 {
			return nil, nil
		}
		return t, nil
	}
}

// parseLabels reads "k=v,k2=v2"; syntax of keys and values is checked by
// agent.Config.Validate.
func parseLabels(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--labels %q: want key=value pairs separated by commas", s)
		}
		out[k] = v
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, z := range strings.Split(s, ",") {
		if z = strings.TrimSpace(z); z != "" {
			out = append(out, z)
		}
	}
	return out
}
