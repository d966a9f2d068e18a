package memberproxy_test

import (
	"context"
	"strings"
	"testing"
)

// TestKubectlGetThroughHub: unmodified kubectl reads a member through the
// hub with the kubeconfig Kubeconfig writes; the member's RBAC decides (the
// hub's admin is nobody there until a binding names tether:role:admin);
// kubectl --as is refused by the hub.
func TestKubectlGetThroughHub(t *testing.T) {
	e := start(t, []string{"edge-1"})
	hub := e.kubeconfig(t, "admin", e.admin, "edge-1")
	e.waitProxy(t, hub)

	msg := e.refused(t, hub, "get", "pods", "-A")
	if !strings.Contains(msg, `"tether:admin"`) || !strings.Contains(msg, "forbidden") {
		t.Errorf("get pods before any member binding: %s; want the member's 403 for user tether:admin", msg)
	}

	e.must(t, e.member("edge-1"), "create", "clusterrolebinding", "tether-admins", "--clusterrole=cluster-admin", "--group=tether:role:admin")
	direct := e.must(t, e.member("edge-1"), "get", "namespaces", "-o", "name")
	proxied := e.must(t, hub, "get", "namespaces", "-o", "name")
	if proxied != direct || !strings.Contains(proxied, "namespace/kube-system") {
		t.Errorf("get namespaces through the hub = %q; want what the member says directly, %q", proxied, direct)
	}
	nodes := e.must(t, hub, "get", "nodes")
	if !strings.Contains(nodes, "node-1") {
		t.Errorf("get nodes through the hub = %q; want the kwok node node-1", nodes)
	}

	// describe and events read several kinds at once, as kubectl does.
	if out := e.must(t, hub, "describe", "node", "node-1"); !strings.Contains(out, "node-1") || !strings.Contains(out, "Conditions:") {
		t.Errorf("describe node through the hub = %q; want node-1's description", out)
	}
	if out := e.must(t, hub, "describe", "namespace", "default"); !strings.Contains(out, "Status:") || !strings.Contains(out, "Active") {
		t.Errorf("describe namespace default through the hub = %q; want its status", out)
	}
	if _, err := e.run(context.Background(), hub, "events", "-A"); err != nil {
		t.Errorf("kubectl events -A through the hub: %v", err)
	}

	msg = e.refused(t, hub, "--as", "system:admin", "get", "pods")
	if !strings.Contains(msg, "does not forward Impersonate-User") {
		t.Errorf("kubectl --as through the hub: %s; want the hub's refusal naming Impersonate-User", msg)
	}
}
