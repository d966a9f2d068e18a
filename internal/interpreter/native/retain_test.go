package native

import "testing"

func TestRetain(t *testing.T) {
	tests := []struct {
		name              string
		desired, observed string
		path              []string
		want              string
	}{
		{
			name:     "deployment keeps member replicas with the label",
			desired:  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, labels: {resourcetemplate.karmada.io/retain-replicas: 'true'}}\nspec: {replicas: 3}",
			observed: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 8}",
			path:     []string{"spec", "replicas"},
			want:     "8",
		},
		{
			name:     "service does not take a zero health check port",
			desired:  "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: ClusterIP}",
			observed: "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {healthCheckNodePort: 0, clusterIP: ''}",
			path:     []string{"spec"},
			want:     `{"type":"ClusterIP"}`,
		},
		{
			name:     "service account secrets null when both empty",
			desired:  "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}",
			observed: "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\nsecrets: []",
			path:     []string{"secrets"},
			want:     "null",
		},
		{
			name:     "pvc keeps the bound volume",
			desired:  "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {}",
			observed: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {volumeName: pv-1}",
			path:     []string{"spec", "volumeName"},
			want:     `"pv-1"`,
		},
		{
			name:     "pv keeps the claim ref",
			desired:  "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: {}",
			observed: "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: {claimRef: {name: c, namespace: ns}}",
			path:     []string{"spec", "claimRef"},
			want:     `{"name":"c","namespace":"ns"}`,
		},
		{
			name:     "job takes the generated selector labels",
			desired:  "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {selector: {matchLabels: {a: b}}}",
			observed: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {selector: {matchLabels: {controller-uid: x}}}",
			path:     []string{"spec", "selector", "matchLabels"},
			want:     `{"controller-uid":"x"}`,
		},
		{
			name:     "opaque secret keeps desired data",
			desired:  "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: Opaque\ndata: {a: YQ==}",
			observed: "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: Opaque\ndata: {a: Yg==}",
			path:     []string{"data"},
			want:     `{"a":"YQ=="}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New().Retain(obj(t, tt.desired), obj(t, tt.observed))
			if err != nil {
				t.Fatalf("Retain: %v", err)
			}
			if s := nested(t, got, tt.path...); s != tt.want {
				t.Errorf("Retain(...).%v = %s; want %s", tt.path, s, tt.want)
			}
		})
	}
}

func TestReviseReplica(t *testing.T) {
	tests := []struct {
		name, doc string
		path      []string
		want      string
		wantErr   string
	}{
		{
			name: "job parallelism",
			doc:  "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: 1, completions: 9}",
			path: []string{"spec", "parallelism"}, want: "4", wantErr: "<nil>",
		},
		{
			name:    "float replicas fail",
			doc:     "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 2.5}",
			wantErr: ".spec.replicas accessor error: 2.5 is of the type float64, expected int64",
		},
		{
			name:    "daemonset has no handler",
			doc:     "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}",
			wantErr: `default ReviseReplica interpreter for "apps/v1, Kind=DaemonSet" not found`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New().ReviseReplica(obj(t, tt.doc), 4)
			if errString(err) != tt.wantErr {
				t.Fatalf("ReviseReplica error = %s; want %s", errString(err), tt.wantErr)
			}
			if err == nil && nested(t, got, tt.path...) != tt.want {
				t.Errorf("ReviseReplica(...).%v = %s; want %s", tt.path, nested(t, got, tt.path...), tt.want)
			}
		})
	}
}
