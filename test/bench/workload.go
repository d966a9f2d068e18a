package bench

import (
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The baseline's workload (shared/bench/karmada-baseline.md, "Workload").
const (
	// Namespace holds the templates on the hub and their copies in the
	// members.
	Namespace = "bench"
	// DirectNamespace holds the limit's Deployments, written straight into
	// the members; a namespace of their own keeps them apart from the
	// agents' copies.
	DirectNamespace = "bench-direct"
	// ImageOld is the image the Deployments are created with, ImageNew the
	// one the update sets.
	ImageOld = "nginx:1.25"
	ImageNew = "nginx:1.27"
	// labelKey=labelValue marks every benchmark Deployment; the policy
	// selects by it.
	labelKey   = "bench"
	labelValue = "baseline"
	// policyName names the one PropagationPolicy of a variant.
	policyName = "bench"
)

// Variant is one of the baseline's placements.
type Variant struct {
	Name     string
	Replicas int32 // the template's spec.replicas
	Divided  bool  // Divided, Weighted 1:1:1; else Duplicated
	Update   bool  // the image update runs on this variant
}

// The baseline's variants: (a) with the update (c), and (b).
var (
	Duplicated = Variant{Name: "duplicated", Replicas: 3, Update: true}
	Divided    = Variant{Name: "divided", Replicas: 6, Divided: true}
)

// PerCluster is the spec.replicas of each member copy.
func (v Variant) PerCluster(clusters int) int32 {
	if v.Divided {
		return v.Replicas / int32(clusters)
	}
	return v.Replicas
}

// Aggregated is the template's aggregated readyReplicas once every copy
// is ready.
func (v Variant) Aggregated(clusters int) int32 {
	if v.Divided {
		return v.Replicas
	}
	return v.Replicas * int32(clusters)
}

// DeploymentName is the i-th Deployment's name: bench-000, bench-001, …
func DeploymentName(i int) string { return fmt.Sprintf("bench-%03d", i) }

// deployment is one benchmark Deployment.
func deployment(namespace, name, image string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace,
			Labels: map[string]string{"app": name, labelKey: labelValue},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: image}}},
			},
		},
	}
}

// deploymentJSON is deployment as the hub's Apply takes it.
func deploymentJSON(namespace, name, image string, replicas int32) ([]byte, error) {
	data, err := json.Marshal(deployment(namespace, name, image, replicas))
	if err != nil {
		return nil, fmt.Errorf("encode deployment %s: %w", name, err)
	}
	return data, nil
}

// policyYAML is the variant's one PropagationPolicy: every Deployment
// labelled bench=baseline, to the listed clusters, Duplicated or Divided
// with a static weight of 1 each.
func policyYAML(v Variant, clusters []string) []byte {
	scheduling := "    replicaScheduling: {replicaSchedulingType: Duplicated}\n"
	if v.Divided {
		var weights strings.Builder
		for _, c := range clusters {
			fmt.Fprintf(&weights, "        - {targetCluster: {clusterNames: [%s]}, weight: 1}\n", c)
		}
		scheduling = "    replicaScheduling:\n" +
			"      replicaSchedulingType: Divided\n" +
			"      replicaDivisionPreference: Weighted\n" +
			"      weightPreference:\n" +
			"        staticWeightList:\n" + weights.String()
	}
	return []byte(fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {%s: %s}}}]
  placement:
    clusterAffinity: {clusterNames: [%s]}
%s`, policyName, Namespace, labelKey, labelValue, strings.Join(clusters, ", "), scheduling))
}

// namespaceYAML is the hub's Namespace of the templates, which the hub
// propagates to every member.
func namespaceYAML() []byte {
	return []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + Namespace + "}\n")
}

// imagePatch is the JSON patch of the update (c).
func imagePatch() []byte {
	return []byte(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"` + ImageNew + `"}]`)
}

// image is a Deployment's first container's image.
func image(d *appsv1.Deployment) string {
	if cs := d.Spec.Template.Spec.Containers; len(cs) > 0 {
		return cs[0].Image
	}
	return ""
}
