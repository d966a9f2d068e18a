package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// notGo lists names the docs write like Go identifiers that are not this
// module's: each with the reason it stays.
var notGo = map[string]string{
	"InterpretReplica": "a resource interpreter operation (interpreter spec)",
	"InputsDecoded":    "a binding condition type",
	"Never":            "a value of the API's preemption field",
	"PolicyPreemption": "Karmada's feature gate",
	"ServerSideApply":  "a value of the apply.tether.io/strategy annotation",
	"CreateOnly":       "a value of the apply.tether.io/strategy annotation",
	"ReadOnly":         "a value of the apply.tether.io/strategy annotation",
	"runControllers(":  "the caller's own function in hub/leader's usage sample",
}

// TestDocsNameWhatExists checks that every package doc comment and every
// package README.md names only identifiers and paths that exist (STYLE:
// "package docs that describe code that exists"). A doc names:
//
//   - pkg.Name: pkg this package or another of the module, Name exported
//     and declared there (a method counts: store.Fenced);
//   - Type.Member: Type declared in this package, Member its field or method;
//   - Name( (CamelCase) or, in a README, `Name`: declared by a package of
//     the module (docs name the API's types and other packages' functions);
//   - name.go, or a repository path (hub/leader, agent/doc.go,
//     hub/store.ErrNotLeader): the file, the directory, and the name in
//     that package exist.
//
// A README is read in its code spans only. Variables a code sample
// declares (api := ...) are not packages. Other words are prose and are
// not checked; notGo lists the exceptions.
func TestDocsNameWhatExists(t *testing.T) {
	pkgs := packages(t)
	byName := map[string][]*decls{} // package name → the module's packages of that name
	byPath := map[string]*decls{}
	for _, p := range pkgs {
		d := parseDecls(t, p)
		byPath[p.ImportPath] = d
		if p.Name != "main" {
			byName[p.Name] = append(byName[p.Name], d)
		}
	}
	used := map[string]bool{}
	for _, p := range pkgs {
		own := byPath[p.ImportPath]
		for _, doc := range own.docs {
			locals := doc.locals()
			for _, ref := range doc.refs() {
				if _, ok := notGo[ref.String()]; ok {
					used[ref.String()] = true
					continue
				}
				if why := resolve(own, byName, byPath, locals, ref); why != "" {
					t.Errorf("%s names %s, but %s", doc.path, ref, why)
				}
			}
		}
	}
	for name := range notGo {
		if !used[name] {
			t.Errorf("notGo lists %s, which no doc names any more; remove it", name)
		}
	}
}

// decls is what one package declares, and its docs.
type decls struct {
	name  string
	dir   string
	files map[string]bool            // base names of its .go files
	top   map[string]bool            // top-level funcs, types, vars, consts
	types map[string]map[string]bool // type → its fields and methods
	meths map[string]bool            // every method, field and interface method name
	docs  []docText
}

// docText is one doc: a package comment (Go) or README.md (markdown).
type docText struct {
	path     string
	text     string
	markdown bool
}

func parseDecls(t *testing.T, p pkg) *decls {
	t.Helper()
	d := &decls{name: p.Name, dir: p.Dir, files: map[string]bool{}, top: map[string]bool{},
		types: map[string]map[string]bool{}, meths: map[string]bool{}}
	fset := token.NewFileSet()
	for _, f := range append(append(append([]string{}, p.GoFiles...), p.TestGoFiles...), p.XTestGoFiles...) {
		d.files[f] = true
		path := filepath.Join(p.Dir, f)
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		// The package comment; a package of tests alone has it in a test file.
		if file.Doc != nil && (!strings.HasSuffix(f, "_test.go") || len(p.GoFiles) == 0) {
			d.docs = append(d.docs, docText{path: rel(path), text: file.Doc.Text()})
		}
		d.add(file)
	}
	readme := filepath.Join(p.Dir, "README.md")
	if b, err := os.ReadFile(readme); err == nil {
		d.docs = append(d.docs, docText{path: rel(readme), text: string(b), markdown: true})
	}
	return d
}

// rel is path relative to the repository root, for messages.
func rel(path string) string {
	if r, err := filepath.Rel(filepath.Join("..", ".."), path); err == nil {
		return r
	}
	if abs, err := filepath.Abs(filepath.Join("..", "..")); err == nil {
		if r, err := filepath.Rel(abs, path); err == nil {
			return r
		}
	}
	return path
}

// add records the declarations of one file.
func (d *decls) add(file *ast.File) {
	for _, decl := range file.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil {
				d.top[decl.Name.Name] = true
				continue
			}
			if recv := recvType(decl.Recv.List[0].Type); recv != "" {
				d.member(recv, decl.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				d.addSpec(spec)
			}
		}
	}
}

func (d *decls) addSpec(spec ast.Spec) {
	switch spec := spec.(type) {
	case *ast.ValueSpec:
		for _, n := range spec.Names {
			d.top[n.Name] = true
		}
	case *ast.TypeSpec:
		d.top[spec.Name.Name] = true
		if d.types[spec.Name.Name] == nil { // its methods may come first
			d.types[spec.Name.Name] = map[string]bool{}
		}
		var fields *ast.FieldList
		switch typ := spec.Type.(type) {
		case *ast.StructType:
			fields = typ.Fields
		case *ast.InterfaceType:
			fields = typ.Methods
		}
		if fields == nil {
			return
		}
		for _, f := range fields.List {
			for _, n := range f.Names {
				d.member(spec.Name.Name, n.Name)
			}
			if len(f.Names) == 0 { // embedded: its name is the type's
				if n := recvType(f.Type); n != "" {
					d.member(spec.Name.Name, n)
				}
			}
		}
	}
}

func (d *decls) member(typ, name string) {
	d.meths[name] = true
	if d.types[typ] == nil {
		d.types[typ] = map[string]bool{}
	}
	d.types[typ][name] = true
}

// recvType is the name of a receiver or embedded type: T, *T, T[P], pkg.T.
func recvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return recvType(e.X)
	case *ast.IndexExpr:
		return recvType(e.X)
	case *ast.IndexListExpr:
		return recvType(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// ref is one identifier a doc names: a selector chain (pkg.Name,
// Type.Member, pkg.Type.Member), a call or a backquoted name.
type ref struct {
	parts []string
	call  bool   // written Name(
	file  string // a backquoted file name
	path  string // a directory of the repository (hub/leader), parts then name what it declares
}

func (r ref) String() string {
	if r.file != "" {
		return r.file
	}
	if r.path != "" && len(r.parts) > 0 {
		return r.path + "." + strings.Join(r.parts, ".")
	}
	if r.path != "" {
		return r.path
	}
	s := strings.Join(r.parts, ".")
	if r.call {
		s += "("
	}
	return s
}

var (
	// selectorRE is a chain a.b(.c): not part of a path, a file name or a
	// longer chain (the character before it is none of \w . / -).
	selectorRE = regexp.MustCompile(`(?:^|[^\w./<>-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)`)
	// callRE is Name( or camelCase( not after a dot (a chain's call is
	// checked as the chain).
	callRE = regexp.MustCompile(`(?:^|[^\w./-])([A-Z]\w*|[a-z]+[A-Z]\w*)\(`)
	// pathRE is a file or directory of the repository's code (agent/doc.go,
	// hub/leader), a directory optionally followed by an exported name it
	// declares (hub/store.ErrNotLeader).
	pathRE = regexp.MustCompile(`(?:^|[^\w./<-])((?:agent|api|cmd|hub|internal|test)(?:/[\w-]+)+(?:\.[a-z]+)?)((?:\.[A-Z]\w*)+)?`)
	// codeRE is a markdown code span.
	codeRE = regexp.MustCompile("`([^`\n]+)`")
	// identRE is a whole backquoted exported identifier (CamelCase; a
	// camelCase one is as often a field of the API's YAML).
	identRE = regexp.MustCompile(`^[A-Z]\w*[a-z]\w*$`)
	// fileRE is a whole backquoted Go file name.
	fileRE = regexp.MustCompile(`^[\w.-]+\.go$`)
)

// fileExts are the last parts of file and domain names, which look like
// selectors (admin.conf, tether.io).
var fileExts = map[string]bool{"go": true, "md": true, "conf": true, "json": true, "yaml": true, "yml": true,
	"crt": true, "key": true, "addr": true, "log": true, "proto": true, "sh": true, "txt": true, "mod": true,
	"sum": true, "io": true, "com": true, "org": true, "lua": true, "pem": true}

// localRE is a variable a code sample declares: x := , x, err := , var x.
var localRE = regexp.MustCompile(`(?m)(?:^|\s)([a-z]\w*)(?:, *[a-z_]\w*)* *:?= |\bvar ([a-z]\w*) `)

// locals are the variables the doc's code samples declare: in
// "api := clientapi.New(...)", api.Register is a method of that value,
// not of package api.
func (doc docText) locals() map[string]bool {
	locals := map[string]bool{}
	for _, m := range localRE.FindAllStringSubmatch(doc.text, -1) {
		locals[m[1]+m[2]] = true
	}
	return locals
}

// refs are the identifiers the doc names. In a README only code spans
// count; in a Go comment all text does.
func (doc docText) refs() []ref {
	var refs []ref
	spans := []string{doc.text}
	if doc.markdown {
		spans = nil
		for _, m := range codeRE.FindAllStringSubmatch(doc.text, -1) {
			switch s := strings.TrimSuffix(m[1], "()"); {
			case fileRE.MatchString(s):
				refs = append(refs, ref{file: s})
			case identRE.MatchString(s):
				refs = append(refs, ref{parts: []string{s}})
			default:
				spans = append(spans, m[1])
			}
		}
	}
	for _, s := range spans {
		for _, m := range pathRE.FindAllStringSubmatch(s, -1) {
			r := ref{path: m[1]}
			if m[2] != "" {
				r.parts = strings.Split(m[2][1:], ".")
			}
			refs = append(refs, r)
		}
		for _, m := range selectorRE.FindAllStringSubmatch(s, -1) {
			parts := strings.Split(m[1], ".")
			switch last := parts[len(parts)-1]; {
			case last == "go" && len(parts) == 2:
				refs = append(refs, ref{file: m[1]})
			case !fileExts[last]:
				refs = append(refs, ref{parts: parts})
			}
		}
		for _, m := range callRE.FindAllStringSubmatch(s, -1) {
			refs = append(refs, ref{parts: []string{m[1]}, call: true})
		}
	}
	return refs
}

// resolve returns why r does not name something that exists, or "" when
// it does or is not checked (a local variable's field, another module's
// package). A single name may be declared by any package of the module
// (docs name the API types and the interpreter's operations they use);
// pkg.Name may name a method (store.Fenced for Store.Fenced).
func resolve(own *decls, byName map[string][]*decls, byPath map[string]*decls, locals map[string]bool, r ref) string {
	if r.path != "" {
		return resolvePath(own, byPath, r)
	}
	if r.file != "" {
		if !own.files[r.file] {
			return "the package has no file " + r.file
		}
		return ""
	}
	if len(r.parts) == 1 {
		name := r.parts[0]
		for _, pkgs := range byName {
			for _, p := range pkgs {
				if p.top[name] || p.meths[name] {
					return ""
				}
			}
		}
		return "no package of the module declares " + name
	}
	head, rest := r.parts[0], r.parts[1:]
	if locals[head] {
		return "" // a variable of a code sample
	}
	// A type of the package (a test's, say) may share its name with
	// another package of the module: either reading will do.
	if own.types[head] != nil && head != own.name && (own.types[head][rest[0]] || len(byName[head]) == 0) {
		if !own.types[head][rest[0]] {
			return "type " + head + " has no field or method " + rest[0]
		}
		return ""
	}
	pkgs := byName[head]
	if len(pkgs) == 0 || !exported(rest[0]) {
		return "" // a variable, another module's package, or prose
	}
	for _, p := range pkgs {
		if !p.top[rest[0]] && !p.meths[rest[0]] {
			continue
		}
		if len(rest) > 1 && p.types[rest[0]] != nil && !p.types[rest[0]][rest[1]] {
			return "type " + head + "." + rest[0] + " has no field or method " + rest[1]
		}
		return ""
	}
	return "package " + head + " declares no " + rest[0]
}

// resolvePath checks that a path names a file or directory of the
// repository (or of the doc's own directory: deploy/'s hub/hub.yaml) and
// that what it is followed by (hub/store.ErrNotLeader) is declared by the
// package there.
func resolvePath(own *decls, byPath map[string]*decls, r ref) string {
	_, errRoot := os.Stat(filepath.Join("..", "..", r.path))
	_, errOwn := os.Stat(filepath.Join(own.dir, r.path))
	if errRoot != nil && errOwn != nil {
		return "the repository has no " + r.path
	}
	if len(r.parts) == 0 {
		return ""
	}
	p := byPath[module+"/"+r.path]
	if p == nil {
		return r.path + " is not a package"
	}
	if !p.top[r.parts[0]] && !p.meths[r.parts[0]] {
		return "package " + r.path + " declares no " + r.parts[0]
	}
	if len(r.parts) > 1 && p.types[r.parts[0]] != nil && !p.types[r.parts[0]][r.parts[1]] {
		return "type " + r.path + "." + r.parts[0] + " has no field or method " + r.parts[1]
	}
	return ""
}

func exported(name string) bool {
	for _, r := range name {
		return unicode.IsUpper(r)
	}
	return false
}

func TestDocRefs(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  docText
		want []string
	}{
		{"go comment", docText{text: "Run calls agentapi.New(cfg) and Config.Relay; see hub/store.ErrNotLeader,\n" +
			"admin.conf, tether.io/x, DataDir/pki and Karmada's util.ClusterMatches. Then NewThing(x) runs."},
			[]string{"hub/store.ErrNotLeader", "agentapi.New", "Config.Relay", "util.ClusterMatches", "NewThing("}},
		{"file names", docText{text: "see agent/doc.go and apply.go"}, []string{"agent/doc.go", "apply.go"}},
		{"readme code spans only", docText{markdown: true, text: "| `apply.go` | `Apply`, `propagateDeps`, `WithX(false)` |\nprose Foo.Bar"},
			[]string{"apply.go", "Apply", "WithX("}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range tc.doc.refs() {
				got = append(got, r.String())
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("refs(%q) = %q; want %q", tc.doc.text, got, tc.want)
			}
		})
	}
}
