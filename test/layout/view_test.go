package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// viewReaders are the controllers that read the replica's view of the
// store (hub/view) and open no list or watch of the store themselves.
var viewReaders = []string{"/hub/render", "/hub/scheduler", "/hub/detector"}

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
