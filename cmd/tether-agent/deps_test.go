package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavy are packages the agent must not link: client-go's typed clientset,
// discovery client and typed informers register or carry every built-in
// API group, which cost the agent some 16 MB of resident memory (issue 16;
// agent/kube replaces what the agent used of them).
var heavy = []string{
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/kubernetes/scheme",
	"k8s.io/client-go/discovery",
	"k8s.io/client-go/restmapper",
	"k8s.io/client-go/informers",
	"k8s.io/client-go/dynamic/dynamicinformer",
	"k8s.io/client-go/openapi",
}

// TestLeanDependencies: the agent's binary links none of heavy.
func TestLeanDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps["k8s.io/client-go/dynamic"] {
		t.Fatalf("go list -deps lacks k8s.io/client-go/dynamic; is the list complete?\n%s", out)
	}
	for _, p := range heavy {
		if deps[p] {
			t.Errorf("tether-agent links %s", p)
		}
	}
}
