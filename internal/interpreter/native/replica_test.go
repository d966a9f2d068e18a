package native

import (
	"encoding/json"
	"testing"
)

func TestGetReplicasRequirements(t *testing.T) {
	tests := []struct {
		name         string
		spec         string
		quota        bool
		wantReplicas int32
		want         string // JSON of the requirements
	}{
		{
			name: "limits default missing requests",
			spec: `
replicas: 2
template:
  spec:
    containers:
    - name: a
      resources: {limits: {cpu: "1", memory: 1Gi}, requests: {cpu: 200m}}`,
			wantReplicas: 2,
			want:         `{"resourceRequest":{"cpu":"200m","memory":"1Gi"}}`,
		},
		{
			name: "init container max per resource then overhead",
			spec: `
replicas: 1
template:
  spec:
    overhead: {cpu: 100m}
    containers:
    - {name: a, resources: {requests: {cpu: 500m, memory: 128Mi}}}
    - {name: b, resources: {requests: {cpu: 250m, memory: 1Gi}}}
    initContainers:
    - {name: i, resources: {limits: {cpu: "2"}}}`,
			wantReplicas: 1,
			want:         `{"resourceRequest":{"cpu":"2100m","memory":"1152Mi"}}`,
		},
		{
			name: "scalar names kept, others dropped",
			spec: `
replicas: 1
template:
  spec:
    containers:
    - name: a
      resources:
        requests:
          storage: 1Gi
          pods: "2"
          attachable-volumes-aws-ebs: "3"
          example.com/foo: "4"
          kubernetes.io/bar: "5"`,
			wantReplicas: 1,
			want:         `{"resourceRequest":{"attachable-volumes-aws-ebs":"3","example.com/foo":"4","kubernetes.io/bar":"5","pods":"2"}}`,
		},
		{
			name:         "zero requests and no claim give nil",
			spec:         "replicas: 3\ntemplate: {spec: {containers: [{name: a, resources: {requests: {cpu: '0'}}}]}}",
			wantReplicas: 3,
			want:         `null`,
		},
		{
			name: "tolerations alone make a node claim",
			spec: "template: {spec: {tolerations: [{operator: Exists}], containers: [{name: a}]}}",
			want: `{"nodeClaim":{"tolerations":[{"operator":"Exists"}]}}`,
		},
		{
			name:         "priority class only with the gate",
			spec:         "replicas: 1\ntemplate: {spec: {priorityClassName: high, nodeSelector: {a: b}, containers: [{name: a}]}}",
			quota:        true,
			wantReplicas: 1,
			want:         `{"nodeClaim":{"nodeSelector":{"a":"b"}},"priorityClassName":"high"}`,
		},
		{
			name:         "no claim and no requests give nil even with the gate",
			spec:         "replicas: 1\ntemplate: {spec: {priorityClassName: high, containers: [{name: a}]}}",
			quota:        true,
			wantReplicas: 1,
			want:         `null`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"+indent(tt.spec))
			replicas, req, err := New(WithResourceQuotaEstimate(tt.quota)).GetReplicas(d)
			if err != nil {
				t.Fatalf("GetReplicas: %v", err)
			}
			got, _ := json.Marshal(req)
			if replicas != tt.wantReplicas || string(got) != tt.want {
				t.Errorf("GetReplicas = %d, %s; want %d, %s", replicas, got, tt.wantReplicas, tt.want)
			}
		})
	}
}

// indent shifts a YAML block two spaces right.
func indent(s string) string {
	out := "  "
	for _, r := range s {
		out += string(r)
		if r == '\n' {
			out += "  "
		}
	}
	return out
}

func TestGetReplicasJob(t *testing.T) {
	tests := []struct {
		spec string
		want int32
	}{
		{"parallelism: 5\ncompletions: 3", 3},
		{"parallelism: 2\ncompletions: 9", 2},
		{"parallelism: 4", 4},
		{"completions: 4", 0},
	}
	for _, tt := range tests {
		job := obj(t, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"+indent(tt.spec+"\ntemplate: {spec: {containers: [{name: a}]}}"))
		got, _, err := New().GetReplicas(job)
		if err != nil || got != tt.want {
			t.Errorf("GetReplicas(%q) = %d, %v; want %d", tt.spec, got, err, tt.want)
		}
	}
}

func TestGetReplicasFloatFails(t *testing.T) {
	d := obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 2.5}")
	if _, _, err := New().GetReplicas(d); err == nil {
		t.Errorf("GetReplicas(replicas 2.5) = nil error; want one")
	}
}
