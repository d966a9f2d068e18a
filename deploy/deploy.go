// Package deploy holds Tether's Kubernetes manifests and renders the
// agent's: agent/agent.yaml is a Go text/template, embedded here, that
// `tetherctl join NAME -o manifest` fills with one cluster's hub address,
// bootstrap token and CA pin (RenderAgent). hub/hub.yaml is a plain
// manifest, applied as is. The Helm charts in charts/ install the same;
// `tetherctl join NAME -o helm` prints the agent chart's install command
// with its values (HelmValues, HelmInstall). README.md explains them all and
// the images (built by the images command, `make images`).
//
// It imports only the standard library.
package deploy

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"text/template"
)

// Where the agent keeps --data-dir in its pod (Agent.DataVolume).
const (
	// DataVolumePVC is a PersistentVolumeClaim: the agent's identity and
	// works survive the pod. The default.
	DataVolumePVC = "pvc"
	// DataVolumeEmptyDir is an emptyDir: nothing to provision, but the
	// state is lost with the pod.
	DataVolumeEmptyDir = "emptydir"
	// DefaultStorageSize is the claim's size: the agent keeps a key, two
	// certificates and the works it holds, a few MiB for thousands of works.
	DefaultStorageSize = "1Gi"
	// ImageRepository is the agent image's placeholder repository: no image
	// is published there yet (see README.md).
	ImageRepository = "ghcr.io/tetherproj/tether-agent"
	// HubImageRepository is the hub image's placeholder repository.
	HubImageRepository = "ghcr.io/tetherproj/tether-hub"
)

//go:embed agent/agent.yaml
var agentTemplateText string

//go:embed hub/hub.yaml
var hubManifest []byte

var agentTemplate = template.Must(template.New("agent.yaml").
	Funcs(template.FuncMap{"quote": quote}).Parse(agentTemplateText))

// Agent is what the agent manifest is filled with.
type Agent struct {
	// Cluster is the member cluster's name (--cluster).
	Cluster string
	// Hub is the address the agent dials, host:port (--hub).
	Hub string
	// Token is the bootstrap token (--token), stored in a Secret.
	Token string
	// CAHash is the hub CA's pin, sha256:<hex> (--ca-hash).
	CAHash string
	// Image is the agent image, e.g. ImageRepository:v0.3.0.
	Image string
	// DataVolume is DataVolumePVC or DataVolumeEmptyDir; empty is
	// DataVolumePVC.
	DataVolume string
	// StorageSize is the claim's size (a Kubernetes quantity); empty is
	// DefaultStorageSize.
	StorageSize string
}

// clusterNameRE is the form of a cluster name: a DNS subdomain, as the hub
// requires (at most 253 characters, checked apart).
var clusterNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// CheckClusterName refuses a name the manifest cannot carry (the hub
// refuses it too).
func CheckClusterName(name string) error {
	if len(name) > 253 || !clusterNameRE.MatchString(name) {
		return fmt.Errorf("cluster name %q: want a DNS subdomain (lower-case letters, digits, '-' and '.', at most 253)", name)
	}
	return nil
}

// RenderAgent returns the multi-document YAML that installs the agent for
// a.Cluster, or an error naming the bad field.
func RenderAgent(a Agent) ([]byte, error) {
	if a.DataVolume == "" {
		a.DataVolume = DataVolumePVC
	}
	if a.StorageSize == "" {
		a.StorageSize = DefaultStorageSize
	}
	if err := CheckClusterName(a.Cluster); err != nil {
		return nil, err
	}
	switch {
	case a.Hub == "" || a.Token == "" || a.CAHash == "" || a.Image == "":
		return nil, fmt.Errorf("agent manifest: hub address, token, CA hash and image are all required")
	case a.DataVolume != DataVolumePVC && a.DataVolume != DataVolumeEmptyDir:
		return nil, fmt.Errorf("data volume %q: want %s or %s", a.DataVolume, DataVolumePVC, DataVolumeEmptyDir)
	}
	var buf bytes.Buffer
	if err := agentTemplate.Execute(&buf, a); err != nil {
		return nil, fmt.Errorf("render agent manifest: %w", err)
	}
	return buf.Bytes(), nil
}

// HubManifest returns deploy/hub/hub.yaml.
func HubManifest() []byte { return bytes.Clone(hubManifest) }

// quote renders s as a YAML double-quoted scalar: a JSON string is one,
// and it escapes whatever could end the scalar or start another node.
func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}
