package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// viewReaders are the controllers and followers that read the replica's
// view of the store (hub/view) and open no list or watch of the store
// themselves.
var viewReaders = []string{"/hub/render", "/hub/scheduler", "/hub/detector", "/hub/revocation", "/hub/roles",
	"/hub/customizations"}

// viewReaderFiles are the files of packages that also follow what the
// view does not hold (hub/aggregate's relay and pruning of reports) that
// read the view and open no list or watch of the store: the aggregator's
// loop over bindings.
var viewReaderFiles = map[string][]string{"/hub/aggregate": {"run.go", "flush.go"}}

// storeFollowing are the calls that list or watch the store: hub/store's
// Watch, WatchRange, ListEach, ListEachAt, ListRange and Follow.
var storeFollowing = map[string]bool{"Watch": true, "WatchRange": true, "ListEach": true, "ListEachAt": true,
	"ListRange": true, "Follow": true}

// TestViewReadersFollowNoStore: the renderer, the scheduling loop and the
// detector read the view; none of their files calls a list or watch of
// the store (a second list+watch per replica, and a second decode of
// every binding).
func TestViewReadersFollowNoStore(t *testing.T) {
	checked := 0
	for _, p := range packages(t) {
		if !isViewReader(p.ImportPath) {
			continue
		}
		checked++
		for _, f := range p.GoFiles {
			for _, call := range storeCalls(t, filepath.Join(p.Dir, f)) {
				t.Errorf("%s calls %s: read the view (hub/view) instead", rel(filepath.Join(p.Dir, f)), call)
			}
		}
	}
	if checked != len(viewReaders) {
		t.Fatalf("checked %d packages; want %v", checked, viewReaders)
	}
}

// TestViewReaderFilesFollowNoStore: the aggregator's loop over bindings
// (hub/aggregate's run.go and flush.go) reads the view; neither file calls
// a list or watch of the store.
func TestViewReaderFilesFollowNoStore(t *testing.T) {
	checked := 0
	for _, p := range packages(t) {
		for _, f := range viewReaderFiles[strings.TrimPrefix(p.ImportPath, module)] {
			checked++
			for _, call := range storeCalls(t, filepath.Join(p.Dir, f)) {
				t.Errorf("%s calls %s: read the view (hub/view) instead", rel(filepath.Join(p.Dir, f)), call)
			}
		}
	}
	want := 0
	for _, files := range viewReaderFiles {
		want += len(files)
	}
	if checked != want {
		t.Fatalf("checked %d files; want %v", checked, viewReaderFiles)
	}
}

func isViewReader(path string) bool {
	for _, r := range viewReaders {
		if path == module+r {
			return true
		}
	}
	return false
}

// storeCalls are the calls in the file at path of a method or function
// named as one of storeFollowing, with their positions.
func storeCalls(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var out []string
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && storeFollowing[sel.Sel.Name] {
			out = append(out, sel.Sel.Name+" at "+fset.Position(call.Pos()).String())
		}
		return true
	})
	return out
}
