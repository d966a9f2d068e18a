package v1alpha1

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func model(grade uint, cpuMin, cpuMax, memMin, memMax string) ResourceModel {
	return ResourceModel{Grade: grade, Ranges: []ResourceModelRange{
		{Name: corev1.ResourceCPU, Min: resource.MustParse(cpuMin), Max: resource.MustParse(cpuMax)},
		{Name: corev1.ResourceMemory, Min: resource.MustParse(memMin), Max: resource.MustParse(memMax)},
	}}
}

func baseCluster() *Cluster {
	return &Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member1", Labels: map[string]string{"env": "prod"}},
		Spec: ClusterSpec{
			Provider: "aws", Region: "eu-west-1", Zones: []string{"eu-west-1a"},
			Taints:         []corev1.Taint{{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoSchedule}},
			ResourceModels: []ResourceModel{model(0, "0", "1", "0", "4Gi"), model(1, "1", "2", "4Gi", "16Gi")},
		},
	}
}

func TestValidateCluster(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Cluster)
		want   []string
		detail string
	}{
		{"valid", func(*Cluster) {}, nil, ""},
		{"name is not a DNS label", func(c *Cluster) { c.Name = "a.b" }, []string{"metadata.name"}, "must not contain dots"},
		{"taint without key", func(c *Cluster) { c.Spec.Taints[0].Key = "" }, []string{"spec.taints[0].key"}, "Required"},
		{"taint key syntax", func(c *Cluster) { c.Spec.Taints[0].Key = "a b" }, []string{"spec.taints[0].key"}, ""},
		{"taint value", func(c *Cluster) { c.Spec.Taints[0].Value = "not valid!" }, []string{"spec.taints[0].value"}, ""},
		{"taint without effect", func(c *Cluster) { c.Spec.Taints[0].Effect = "" }, []string{"spec.taints[0].effect"}, "Required"},
		{"taint effect", func(c *Cluster) { c.Spec.Taints[0].Effect = "Evict" }, []string{"spec.taints[0].effect"}, "Unsupported value"},
		{"duplicate taint", func(c *Cluster) {
			c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: c.Spec.Taints[0].Key, Value: "x", Effect: corev1.TaintEffectNoSchedule})
		}, []string{"spec.taints[1]"}, "Duplicate value"},
		{"same taint key, other effect", func(c *Cluster) {
			c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: c.Spec.Taints[0].Key, Effect: corev1.TaintEffectNoExecute})
		}, nil, ""},
		{"first model not from 0", func(c *Cluster) { c.Spec.ResourceModels[0].Ranges[0].Min = resource.MustParse("500m") },
			[]string{"spec.resourceModels[0].ranges[0].min"}, "must be 0 in the first model"},
		{"empty range", func(c *Cluster) { c.Spec.ResourceModels[1].Ranges[1].Max = resource.MustParse("4Gi") },
			[]string{"spec.resourceModels[1].ranges[1].max"}, "must be greater than min"},
		{"gap between models", func(c *Cluster) { c.Spec.ResourceModels[1].Ranges[0].Min = resource.MustParse("1500m") },
			[]string{"spec.resourceModels[1].ranges[0].min"}, "contiguous"},
		{"gap between unsorted models", func(c *Cluster) {
			c.Spec.ResourceModels = []ResourceModel{model(1, "2", "4", "4Gi", "16Gi"), model(0, "0", "1", "0", "4Gi")}
		}, []string{"spec.resourceModels[0].ranges[0].min"}, "must equal the previous model's max 1"},
		{"same grade", func(c *Cluster) { c.Spec.ResourceModels[1].Grade = 0 },
			[]string{"spec.resourceModels[1].grade"}, "Duplicate value"},
		{"other resources", func(c *Cluster) { c.Spec.ResourceModels[1].Ranges[1].Name = corev1.ResourceEphemeralStorage },
			[]string{"spec.resourceModels[1].ranges[1].name"}, `must be "memory"`},
		{"fewer resources", func(c *Cluster) { c.Spec.ResourceModels[1].Ranges = c.Spec.ResourceModels[1].Ranges[:1] },
			[]string{"spec.resourceModels[1].ranges"}, "same resources"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseCluster()
			tt.mutate(c)
			errs := c.Validate()
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("Validate(%s) = %v; want errors at %v", tt.name, errs, tt.want)
			}
			if tt.detail != "" && !strings.Contains(errs[0].Error(), tt.detail) {
				t.Errorf("Validate(%s) = %v; want it to say %q", tt.name, errs[0], tt.detail)
			}
		})
	}
}

func TestClusterSetDefaultsSortsModels(t *testing.T) {
	c := baseCluster()
	c.Spec.ResourceModels[0], c.Spec.ResourceModels[1] = c.Spec.ResourceModels[1], c.Spec.ResourceModels[0]
	if errs := c.Validate(); len(errs) != 0 {
		t.Fatalf("Validate(unsorted models) = %v; want none (models are compared in grade order)", errs)
	}
	c.SetDefaults()
	if c.Spec.ResourceModels[0].Grade != 0 || c.Spec.ResourceModels[1].Grade != 1 {
		t.Errorf("SetDefaults() grades = %d, %d; want 0, 1", c.Spec.ResourceModels[0].Grade, c.Spec.ResourceModels[1].Grade)
	}
	if errs := c.Validate(); len(errs) != 0 {
		t.Errorf("Validate(SetDefaults(unsorted models)) = %v; want none", errs)
	}
}
