package native

import (
	"testing"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

func TestAggregateStatus(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		statuses map[string]string // cluster -> status YAML ("" = no status), in sorted cluster order
		path     []string
		want     string
	}{
		{
			name:     "pv failed wins",
			doc:      "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nstatus: {phase: Bound}",
			statuses: map[string]string{"a": "phase: Bound", "b": "phase: Failed", "c": ""},
			path:     []string{"status"}, want: `{"phase":"Failed"}`,
		},
		{
			name:     "pv missing status counts as pending",
			doc:      "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}",
			statuses: map[string]string{"a": "phase: Available", "b": ""},
			path:     []string{"status"}, want: `{"phase":"Pending"}`,
		},
		{
			name:     "pod missing status counts as pending",
			doc:      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a}]}",
			statuses: map[string]string{"a": "phase: Running", "b": ""},
			path:     []string{"status", "phase"}, want: `"Pending"`,
		},
		{
			name:     "pod init container statuses kept",
			doc:      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a}]}",
			statuses: map[string]string{"a": "phase: Pending\ninitContainerStatuses: [{name: i, ready: false, restartCount: 3, state: {waiting: {reason: X}}}]"},
			path:     []string{"status", "initContainerStatuses"},
			want:     `[{"image":"","imageID":"","lastState":{},"name":"","ready":false,"restartCount":0,"state":{"waiting":{"reason":"X"}}}]`,
		},
		{
			name: "service entries sorted, nil ipMode last",
			doc:  "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}",
			statuses: map[string]string{
				"a": "loadBalancer: {ingress: [{ip: 10.0.0.2}, {ip: 10.0.0.1}]}",
				"b": "loadBalancer: {ingress: [{ip: 10.0.0.1, ipMode: Proxy}, {hostname: z.example}, {ip: 10.0.0.2}]}",
			},
			path: []string{"status", "loadBalancer", "ingress"},
			want: `[{"hostname":"z.example"},{"ip":"10.0.0.1","ipMode":"Proxy"},{"ip":"10.0.0.1"},{"ip":"10.0.0.2"}]`,
		},
		{
			name: "ingress entries merged with ports",
			doc:  "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}",
			statuses: map[string]string{
				"a": "loadBalancer: {ingress: [{ip: 1.1.1.1, ports: [{port: 443, protocol: TCP}]}]}",
				"b": "loadBalancer: {ingress: [{ip: 1.1.1.1, ports: [{port: 80, protocol: TCP}]}, {hostname: lb.example}]}",
			},
			path: []string{"status", "loadBalancer", "ingress"},
			want: `[{"hostname":"lb.example"},{"ip":"1.1.1.1","ports":[{"port":80,"protocol":"TCP"},{"port":443,"protocol":"TCP"}]}]`,
		},
		{
			name: "deployment with no items advances observedGeneration",
			doc:  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 4}\nstatus: {observedGeneration: 3, replicas: 1}",
			path: []string{"status"}, want: `{"observedGeneration":4}`,
		},
		{
			name:     "non-LoadBalancer service unchanged",
			doc:      "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: ClusterIP}\nstatus: {custom: kept}",
			statuses: map[string]string{"a": "loadBalancer: {ingress: [{ip: 1.1.1.1}]}"},
			path:     []string{"status"}, want: `{"custom":"kept"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var items []configv1alpha1.AggregatedStatusItem
			for _, cluster := range sortedKeys(toSet(tt.statuses)) {
				items = append(items, item(t, cluster, tt.statuses[cluster]))
			}
			got, err := New().AggregateStatus(obj(t, tt.doc), items)
			if err != nil {
				t.Fatalf("AggregateStatus: %v", err)
			}
			if s := nested(t, got, tt.path...); s != tt.want {
				t.Errorf("AggregateStatus(...).%v = %s; want %s", tt.path, s, tt.want)
			}
		})
	}
}

func toSet(m map[string]string) map[string]bool {
	s := map[string]bool{}
	for k := range m {
		s[k] = true
	}
	return s
}
