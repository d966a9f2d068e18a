package v1alpha1_test

import (
	"strings"
	"testing"

	"github.com/tetherproj/tether/api/codec"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// customizations is written as Karmada's shipped customizations are: folded
// and literal Lua scripts, several documents.
const customizations = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: declarative-configuration-cloneset
spec:
  target:
    apiVersion: apps.kruise.io/v1alpha1
    kind: CloneSet
  customizations:
    replicaResource:
      luaScript: >
        local kube = require("kube")
        function GetReplicas(obj)
          replica = obj.spec.replicas
          requirement = kube.accuratePodRequirements(obj.spec.template)
          return replica, requirement
        end
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          return observedObj.status.readyReplicas == observedObj.spec.replicas
        end
---
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterWebhookConfiguration
metadata:
  name: examples
webhooks:
  - name: workloads.example.com
    rules:
      - operations: ["InterpretReplica", "ReviseReplica", "Retain", "AggregateStatus"]
        apiGroups: ["workload.example.io"]
        apiVersions: ["v1alpha1"]
        kinds: ["Workload"]
    clientConfig:
      url: https://karmada-interpreter-webhook-example.karmada-system.svc:443/interpreter-workload
      caBundle: Zm9v
    interpreterContextVersions: ["v1alpha1"]
    timeoutSeconds: 3
`

func TestDecodeKarmadaConfig(t *testing.T) {
	objs, err := codec.DecodeAll([]byte(customizations))
	if err != nil {
		t.Fatalf("DecodeAll(customizations) = %v; want no error", err)
	}
	if len(objs) != 2 {
		t.Fatalf("DecodeAll(customizations) = %d objects; want 2", len(objs))
	}
	for _, obj := range objs {
		if errs := obj.Validate(); len(errs) > 0 {
			t.Errorf("Validate(%s) = %v; want no errors", obj.GetName(), errs)
		}
	}
	ric := objs[0].(*configv1alpha1.ResourceInterpreterCustomization)
	script, ok := ric.Spec.Customizations.Script(configv1alpha1.InterpreterOperationInterpretReplica)
	if !ok || !strings.HasPrefix(script, "local kube = require(\"kube\") function GetReplicas(obj)\n") {
		t.Errorf("Script(InterpretReplica) = %q; want the folded script", script)
	}
	hook := objs[1].(*configv1alpha1.ResourceInterpreterWebhookConfiguration).Webhooks[0]
	if string(hook.ClientConfig.CABundle) != "foo" || *hook.TimeoutSeconds != 3 || len(hook.Rules[0].Operations) != 4 {
		t.Errorf("Decode(webhook) = %+v; want caBundle foo, timeout 3 and four operations", hook)
	}
}
