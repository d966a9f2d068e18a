package security

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// containedAttacks are the attacks of TestHostileInputs that are not one
// refused call: a read whose answer must hide something, floods whose
// excess must wait or end while the rest goes on, webhooks the hub must
// not reach. The registration floods come last: they spend the
// registration rate limit of 127.0.0.1.
func containedAttacks() []attack {
	attacks := []attack{
		{"viewer reads a Secret", viewerReadsSecret},
		{"101 calls on one connection", streamsPerConnection},
		{"101 streams on one connection, the limit ignored", streamsIgnoringTheLimit},
		{"10 streams of one cluster at once", streamsPerCluster},
		{"10 streams of one cluster that never say Hello", silentStreamsPerCluster},
		{"stored customization that spins on real objects", spinningCustomization},
		{"interpreter webhook that hangs", hangingWebhook},
	}
	for _, more := range [][]attack{agentFloods(), hugeHeartbeats(), stalledWatches(), credentialAttacks(), webhookAttacks(), registrationFloods()} {
		attacks = append(attacks, more...)
	}
	return attacks
}

// secretValue is the data of the Secret viewers read; it must never reach
// them.
const secretValue = "hunter2-database-password"

// viewerReadsSecret: a viewer's Get, List, Watch and `tetherctl get secret
// -o yaml` of a stored Secret show its keys with empty values and the
// redaction annotation, never the data.
func viewerReadsSecret(t *testing.T, e *hostileEnv) string {
	secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: default}\nstringData: {password: %s}\n", secretValue)
	if _, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(secret)}); err != nil {
		t.Fatalf("apply the Secret as admin: %v", err)
	}
	objects := hubv1.NewObjectServiceClient(e.viewer)
	ref := &hubv1.ObjectRef{ApiVersion: "v1", Kind: "Secret", Namespace: "default", Name: "db"}
	got, err := objects.Get(rpcCtx(t), &hubv1.GetRequest{Ref: ref})
	if err != nil {
		t.Fatalf("viewer Get of the Secret: %v", err)
	}
	reads := map[string]string{"Get": string(got.GetObject().GetObjectJson())}
	list, err := objects.List(rpcCtx(t), &hubv1.ListRequest{ApiVersion: "v1", Kind: "Secret", Namespace: "default"})
	if err != nil {
		t.Fatalf("viewer List of Secrets: %v", err)
	}
	for _, o := range list.GetObjects() {
		reads["List"] += string(o.GetObjectJson())
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	ws, err := objects.Watch(ctx, &hubv1.WatchRequest{ApiVersion: "v1", Kind: "Secret", Namespace: "default", StartRevision: got.GetObject().GetRevision() - 1})
	if err != nil {
		t.Fatalf("viewer Watch of Secrets: %v", err)
	}
	ev, err := ws.Recv()
	if err != nil {
		t.Fatalf("viewer Watch of Secrets: %v", err)
	}
	reads["Watch"] = string(ev.GetObject().GetObjectJson())
	conf := filepath.Join(t.TempDir(), "viewer.conf")
	mustCtl(t, e.h.adminConf(), "user", "create", fmt.Sprintf("reader-%d", e.attacks), "--role", "viewer", "-o", conf)
	reads["tetherctl get secret db -o yaml"] = mustCtl(t, conf, "get", "secret", "db", "-n", "default", "-o", "yaml")
	for how, obj := range reads {
		if !strings.Contains(obj, "secret.tether.io/redacted") || !strings.Contains(obj, "password") {
			t.Errorf("viewer %s of the Secret = %.300s; want the key password and the redaction annotation", how, obj)
		}
		if strings.Contains(obj, secretValue) || strings.Contains(obj, "aHVudGVyMi") { // the value, or its base64
			t.Errorf("viewer %s of the Secret shows its data: %.300s", how, obj)
		}
	}
	return "contained: keys shown, values hidden in Get, List, Watch and tetherctl"
}

// spinningCustomization: an admin stores a customization whose script
// passes the dry run (on an object without spec) but loops forever on a
// real object, then a workload it interprets. The hub's detector gives up
// on that workload within the Lua limits (its log says so) and goes on: a
// ConfigMap applied afterwards still gets its binding.
func spinningCustomization(t *testing.T, e *hostileEnv) string {
	ric := customization("spinner", "function GetReplicas(obj)\n  if obj.spec ~= nil and obj.spec.replicas ~= nil then\n    while true do end\n  end\n  return 1, {}\nend")
	manifests := ric + `---
apiVersion: example.com/v1
kind: Widgetspinner
metadata: {name: spun, namespace: default}
spec: {replicas: 2}
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: spun, namespace: default}
spec:
  resourceSelectors: [{apiVersion: example.com/v1, kind: Widgetspinner, name: spun}]
  placement: {clusterAffinity: {clusterNames: [nowhere]}}
`
	if _, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(manifests)}); err != nil {
		t.Fatalf("apply the customization, its workload and policy: %v", err)
	}
	refs := []*hubv1.ObjectRef{
		{ApiVersion: "policy.tether.io/v1alpha1", Kind: "PropagationPolicy", Namespace: "default", Name: "spun"},
		{ApiVersion: "example.com/v1", Kind: "Widgetspinner", Namespace: "default", Name: "spun"},
		{ApiVersion: "config.tether.io/v1alpha1", Kind: "ResourceInterpreterCustomization", Name: "spinner"},
		{ApiVersion: "policy.tether.io/v1alpha1", Kind: "PropagationPolicy", Namespace: "default", Name: "after-spin"},
		{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "after-spin"},
	}
	defer e.deleteAll(t, refs)
	about := "interpret replicas of Widgetspinner default/spun"
	poll(t, 60*time.Second, "hub log saying the detector gave up: "+about, func() (bool, string) {
		return strings.Contains(readFile(e.h.log), about), ""
	})
	start := time.Now()
	after := configMap("after-spin", "v") + "---\n" + strings.ReplaceAll(policyWith(1, "nowhere", func(int) string {
		return "{apiVersion: v1, kind: ConfigMap, name: after-spin}"
	}), "metadata: {name: p}", "metadata: {name: after-spin, namespace: default}")
	if _, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(after), DefaultNamespace: "default"}); err != nil {
		t.Fatalf("apply a ConfigMap and its policy after the spinning workload: %v", err)
	}
	places := hubv1.NewPlacementServiceClient(e.admin)
	poll(t, 60*time.Second, "the ConfigMap applied after the spinning workload bound", func() (bool, string) {
		resp, err := places.GetPlacement(rpcCtx(t), &hubv1.GetPlacementRequest{Template: refs[4]})
		return err == nil && resp.GetPlacement().GetBinding() != nil, fmt.Sprint(resp, err)
	})
	return fmt.Sprintf("contained: the workload's interpretation failed; the next template bound %.1f s later", time.Since(start).Seconds())
}

// deleteAll deletes refs as the admin, in order.
func (e *hostileEnv) deleteAll(t *testing.T, refs []*hubv1.ObjectRef) {
	t.Helper()
	for _, ref := range refs {
		if _, err := e.objects().Delete(rpcCtx(t), &hubv1.DeleteRequest{Ref: ref}); err != nil {
			t.Errorf("delete %s %s: %v", ref.GetKind(), ref.GetName(), err)
		}
	}
}

// registrationFloods: Register called 200 times from 127.0.0.1 with a bad
// token is cut off by the rate limit of that address. Then, while
// 127.0.0.1 goes on flooding, each call refused, a registration from
// another address (127.0.0.2) is served: the limit is per source, and a
// flood does not starve real registrations.
func registrationFloods() []attack {
	return []attack{hostileCase{"registration flood", func(t *testing.T, e *hostileEnv) error {
		return e.flood(t)
	}, codes.ResourceExhausted, []string{"registration rate limit", "registrations per second"}}.attack(),
		{"another source registers during a registration flood", func(t *testing.T, e *hostileEnv) string {
			if err := e.flood(t); status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("flood from 127.0.0.1 = %v; want ResourceExhausted", err)
			}
			if _, err := registerFrom(t, e.h, e.tok, "other-source", nil, "127.0.0.2"); err != nil {
				t.Fatalf("Register from 127.0.0.2 right after a flood from 127.0.0.1 was refused: %v; want served", err)
			}
			return "contained: the flooding address is limited, 127.0.0.2 registers"
		}},
	}
}

// flood calls Register from 127.0.0.1 with a bad token until the hub
// refuses with ResourceExhausted, at most 200 times, and returns the last
// refusal.
func (e *hostileEnv) flood(t *testing.T) error {
	var err error
	for range 200 {
		err = e.registerRaw(t, &agentv1.RegisterRequest{Token: "flood", ClusterName: "flood"})
		if status.Code(err) == codes.ResourceExhausted {
			return err
		}
	}
	if err == nil {
		return errors.New("200 registrations served")
	}
	return err
}
