// Package layout checks the repository's structural rules (DESIGN §2, STYLE):
// every package has a doc comment, its docs name only code that exists,
// dependencies point one way, and each door's generated gRPC clients are
// constructed only by that door's one client (clients_test.go).
package layout

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tetherproj/tether"

type pkg struct {
	ImportPath string
	Dir        string
	Doc        string
	Name       string
	Deps       []string
	GoFiles    []string
	// TestGoFiles and XTestGoFiles are the package's _test.go files (in
	// the package and in package X_test).
	TestGoFiles  []string
	XTestGoFiles []string
	// Imports are what its non-test files import directly, TestImports
	// what its _test.go files in the package do.
	Imports     []string
	TestImports []string
}

// packages lists every package of the main module with its transitive deps.
func packages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found %d packages; want the whole module", len(pkgs))
	}
	return pkgs
}

func TestEveryPackageHasADocComment(t *testing.T) {
	for _, p := range packages(t) {
		if len(p.GoFiles) == 0 {
			continue
		}
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("package %s has no doc comment; add one saying what it owns", p.ImportPath)
		}
	}
}

func TestAgentNeverImportsHub(t *testing.T) {
	for _, p := range packages(t) {
		if !strings.HasPrefix(p.ImportPath, module+"/agent") {
			continue
		}
		for _, d := range p.Deps {
			if d == module+"/hub" || strings.HasPrefix(d, module+"/hub/") {
				t.Errorf("%s imports %s; agent/ must never import hub/ (DESIGN §2)", p.ImportPath, d)
			}
		}
	}
}

func TestDependenciesPointOneWay(t *testing.T) {
	// cmd → hub|agent|client → internal → api: a lower layer never imports a
	// higher one, and the public client carries neither hub nor agent.
	forbidden := map[string][]string{
		"/api":      {"/internal", "/hub", "/agent", "/cmd", "/test"},
		"/internal": {"/hub", "/agent", "/cmd", "/test"},
		"/hub":      {"/agent", "/cmd"},
		"/client":   {"/hub", "/agent", "/cmd", "/test"},
	}
	for _, p := range packages(t) {
		for layer, bans := range forbidden {
			if !strings.HasPrefix(p.ImportPath, module+layer) {
				continue
			}
			for _, d := range p.Deps {
				for _, ban := range bans {
					if d == module+ban || strings.HasPrefix(d, module+ban+"/") {
						t.Errorf("%s imports %s; %s may not import %s", p.ImportPath, d, layer, ban)
					}
				}
			}
		}
	}
}
