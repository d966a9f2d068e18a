package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// clientHomes maps each generated gRPC package to the packages that may
// construct its service clients: the one client of that door (STYLE 11),
// where paging, watch resume and the retryable codes live once. Every
// other program calls that client's typed methods.
var clientHomes = map[string][]string{
	// The hub's client API: the public Go client, which tetherctl and the
	// test harnesses (test/fleet) use.
	module + "/api/gen/tether/hub/v1": {module + "/client"},
	// The agent protocol: the agent's stream and registration, and the
	// load tool's simulated agents, which register as agents do.
	module + "/api/gen/tether/agent/v1": {module + "/agent", module + "/test/load"},
}

// serviceClientCtor matches a generated service client constructor.
var serviceClientCtor = regexp.MustCompile(`^New\w+ServiceClient$`)

// TestServiceClientsOnlyInTheirClient fails when code outside a generated
// package's clientHomes names one of its New*ServiceClient constructors
// (calling it or passing it on). Test files may: a test of the server
// sends requests no client would (hostile, raw, malformed).
func TestServiceClientsOnlyInTheirClient(t *testing.T) {
	pkgs := packages(t)
	names := map[string]string{} // import path → package name
	for _, p := range pkgs {
		names[p.ImportPath] = p.Name
	}
	checked := 0
	for _, p := range pkgs {
		if strings.HasPrefix(p.ImportPath, module+"/api/gen/") {
			continue // the generated code itself
		}
		for _, name := range p.GoFiles {
			path := filepath.Join(p.Dir, name)
			for _, use := range serviceClientUses(t, path, names) {
				checked++
				if !homeOf(use.pkg, p.ImportPath) {
					t.Errorf("%s:%d: %s.%s outside %v: call the typed methods of the door's client instead",
						path, use.line, use.pkg, use.name, clientHomes[use.pkg])
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no New*ServiceClient call at all; want at least client/'s: is the parse broken?")
	}
}

// homeOf reports whether pkg may construct the service clients of gen.
func homeOf(gen, pkg string) bool {
	for _, home := range clientHomes[gen] {
		if pkg == home || strings.HasPrefix(pkg, home+"/") {
			return true
		}
	}
	return false
}

// ctorUse is one mention of a generated constructor.
type ctorUse struct {
	pkg, name string // the generated package's import path, the constructor
	line      int
}

// serviceClientUses lists the file's mentions of New*ServiceClient of
// the module's generated packages, whatever name they are imported as
// (names maps import paths to package names).
func serviceClientUses(t *testing.T, path string, names map[string]string) []ctorUse {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	gen := map[string]string{} // local name → import path
	for _, imp := range f.Imports {
		ip, _ := strconv.Unquote(imp.Path.Value)
		if !strings.HasPrefix(ip, module+"/api/gen/") {
			continue
		}
		name := names[ip]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		gen[name] = ip
	}
	var uses []ctorUse
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || !serviceClientCtor.MatchString(sel.Sel.Name) {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && gen[x.Name] != "" {
			uses = append(uses, ctorUse{pkg: gen[x.Name], name: sel.Sel.Name, line: fset.Position(sel.Pos()).Line})
		}
		return true
	})
	return uses
}
