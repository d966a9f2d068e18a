package deploy

import (
	"fmt"
	"strings"
)

// Where `tetherctl join -o helm` installs the agent chart.
const (
	// AgentChartPath is the agent chart in a checkout of the repository
	// (no chart repository is published yet).
	AgentChartPath = "deploy/charts/tether-agent"
	// AgentRelease and AgentNamespace are the release's name and namespace.
	AgentRelease   = "tether-agent"
	AgentNamespace = "tether-system"
)

// HelmValues returns the values file of the tether-agent chart for a: the
// four required values, the image and the data volume, every string
// quoted. It refuses what RenderAgent refuses, and an image by digest
// (the chart takes a repository and a tag).
func HelmValues(a Agent) (string, error) {
	if a.DataVolume == "" {
		a.DataVolume = DataVolumePVC
	}
	if _, err := RenderAgent(a); err != nil { // one check of the fields
		return "", err
	}
	if err := CheckChartImage(a.Image); err != nil {
		return "", err
	}
	repo, tag := splitImage(a.Image)
	volume := "pvc"
	if a.DataVolume == DataVolumeEmptyDir {
		volume = "emptyDir"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cluster: %s\nhub: %s\ncaHash: %s\n", quote(a.Cluster), quote(a.Hub), quote(a.CAHash))
	fmt.Fprintf(&b, "bootstrapToken:\n  value: %s\n", quote(a.Token))
	fmt.Fprintf(&b, "image:\n  repository: %s\n  tag: %s\n", quote(repo), quote(tag))
	fmt.Fprintf(&b, "persistence:\n  type: %s\n", quote(volume))
	if a.StorageSize != "" {
		fmt.Fprintf(&b, "  size: %s\n", quote(a.StorageSize))
	}
	return b.String(), nil
}

// CheckChartImage refuses an image the chart's image.repository and
// image.tag cannot carry: one by digest.
func CheckChartImage(image string) error {
	if strings.Contains(image, "@") {
		return fmt.Errorf("image %q: the chart takes REPOSITORY:TAG, not a digest", image)
	}
	return nil
}

// HelmInstall returns the shell command that installs the agent chart from
// chart (AgentChartPath when empty) with HelmValues(a) on standard input.
func HelmInstall(a Agent, chart string) (string, error) {
	values, err := HelmValues(a)
	if err != nil {
		return "", err
	}
	if chart == "" {
		chart = AgentChartPath
	}
	return fmt.Sprintf("helm upgrade --install %s %s --namespace %s --create-namespace --values - <<'EOF'\n%sEOF\n",
		AgentRelease, chart, AgentNamespace, values), nil
}

// splitImage splits REPOSITORY[:TAG]; a colon before the last slash is a
// registry's port, not a tag.
func splitImage(image string) (repo, tag string) {
	i := strings.LastIndex(image, ":")
	if i < 0 || i < strings.LastIndex(image, "/") {
		return image, ""
	}
	return image[:i], image[i+1:]
}
