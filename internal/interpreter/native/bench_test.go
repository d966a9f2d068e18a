package native

import (
	"fmt"
	"testing"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

const benchDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
  namespace: shop
  generation: 5
  labels: {app: checkout, resourcetemplate.karmada.io/retain-replicas: 'true'}
spec:
  replicas: 10
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec:
      containers:
      - name: checkout
        image: registry.example.io/checkout:3.4.1
        resources: {requests: {cpu: 500m, memory: 512Mi}, limits: {cpu: '1', memory: 1Gi}}
        envFrom: [{configMapRef: {name: checkout-env}}]
      volumes: [{name: certs, secret: {secretName: checkout-tls}}]
status:
  observedGeneration: 5
  replicas: 10
  updatedReplicas: 10
  readyReplicas: 10
  availableReplicas: 10
`

func BenchmarkNativeRetainDeployment(b *testing.B) {
	ipt := New()
	desired, observed := obj(b, benchDeployment), obj(b, benchDeployment)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ipt.Retain(desired.DeepCopy(), observed); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNativeAggregateStatusDeployment10Clusters(b *testing.B) {
	ipt := New()
	template := obj(b, benchDeployment)
	items := make([]configv1alpha1.AggregatedStatusItem, 10)
	for i := range items {
		items[i] = item(b, fmt.Sprintf("member%d", i),
			"{generation: 5, resourceTemplateGeneration: 5, observedGeneration: 5, replicas: 1, readyReplicas: 1, updatedReplicas: 1, availableReplicas: 1}")
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ipt.AggregateStatus(template, items); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNativeInterpretHealthDeployment(b *testing.B) {
	ipt := New()
	observed := obj(b, benchDeployment)
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := ipt.InterpretHealth(observed); err != nil || !ok {
			b.Fatalf("InterpretHealth = %t, %v", ok, err)
		}
	}
}
