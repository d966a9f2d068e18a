package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// forbiddenDeps are import-path prefixes tetherctl must not link: the
// embedded etcd server (and its raft and bolt storage) and the hub
// packages that hold the store. The CLI talks to the hub over gRPC and
// runs the hub's pure decisions offline (hub/placement,
// hub/aggregate/fold ...); a dependency on any of these means a pure
// function was taken from a package that also does I/O.
var forbiddenDeps = []string{
	"go.etcd.io/etcd/server/",
	"go.etcd.io/raft/",
	"go.etcd.io/bbolt",
	"github.com/tetherproj/tether/hub/store",
}

// TestNoEtcdServer lists tetherctl's transitive imports with `go list
// -deps` and fails on any forbidden one, naming the chain that brings it
// in.
func TestNoEtcdServer(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("find the go command: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	imports := map[string][]string{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ":")
		imports[pkg] = strings.Fields(deps)
		order = append(order, pkg)
	}
	if len(order) < 10 {
		t.Fatalf("go list -deps listed %d packages; want tetherctl's whole import graph", len(order))
	}
	root := order[len(order)-1] // go list -deps lists dependencies first
	for _, pkg := range order {
		if !forbidden(pkg) {
			continue
		}
		path := chain(imports, root, pkg)
		if slices.ContainsFunc(path[:len(path)-1], forbidden) {
			continue // reported through the forbidden package that brings it in
		}
		t.Errorf("tetherctl links %s: %s", pkg, strings.Join(path, " → "))
	}
}

func forbidden(pkg string) bool {
	return slices.ContainsFunc(forbiddenDeps, func(prefix string) bool { return strings.HasPrefix(pkg, prefix) })
}

// chain is a shortest import path from root to pkg (breadth first).
func chain(imports map[string][]string, root, pkg string) []string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == pkg {
			var out []string
			for p := pkg; p != ""; p = prev[p] {
				out = append([]string{p}, out...)
			}
			return out
		}
		for _, next := range imports[cur] {
			if _, seen := prev[next]; !seen {
				prev[next] = cur
				queue = append(queue, next)
			}
		}
	}
	return []string{pkg}
}
