package layout

import (
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// importPhrases are the names "It imports" sentences may give outside
// packages by, each with the import paths it stands for (a path ending in
// "/..." stands for the tree under it). Any other item of such a sentence
// is a path: hub/store, api/ (with its slash: the tree under it),
// sigs.k8s.io/yaml.
var importPhrases = map[string][]string{
	"go-hclog":                 {"github.com/hashicorp/go-hclog"},
	"etcd client":              {"go.etcd.io/etcd/client/v3/...", "go.etcd.io/etcd/api/v3/..."},
	"etcd server":              {"go.etcd.io/etcd/server/v3/..."},
	"grpc":                     {"google.golang.org/grpc/..."},
	"protobuf":                 {"google.golang.org/protobuf/..."},
	"generated agent protocol": {module + "/api/gen/tether/agent/v1"},
	"generated hub api":        {module + "/api/gen/tether/hub/v1"},
	"kubernetes api packages":  {"k8s.io/api/...", "k8s.io/apimachinery/..."},
	"kubernetes api types":     {"k8s.io/api/...", "k8s.io/apimachinery/..."},
	"kubernetes api machinery": {"k8s.io/api/...", "k8s.io/apimachinery/..."},
	"client-go":                {"k8s.io/client-go/..."},
	"prometheus client":        {"github.com/prometheus/client_golang/..."},
	"zap":                      {"go.uber.org/zap/..."},
	"standard library":         nil, // always allowed
	"nothing":                  nil,
}

// TestImportSentencesAreTrue checks every "It imports ..." sentence of a
// package doc against what the package's files import. The sentence is
// read up to its first ";" or ":" (the rest is prose), without its
// parentheses, as items separated by commas, "and" and "plus":
//
//   - every item names an import of the package (a path, or one of
//     importPhrases), and every package of this module it imports is named;
//   - with "only" (or "nothing"), everything it imports outside the
//     standard library is named;
//   - what follows "never" is not imported, directly or through another
//     package.
func TestImportSentencesAreTrue(t *testing.T) {
	checked := 0
	for _, p := range packages(t) {
		imports := p.Imports
		if len(p.GoFiles) == 0 {
			imports = p.TestImports
		}
		for _, doc := range packageDocs(t, p) {
			for _, s := range importSentences(doc.text) {
				checked++
				for _, problem := range checkImportSentence(s, imports, p.Deps) {
					t.Errorf("%s: %q: %s", doc.path, s, problem)
				}
			}
		}
	}
	if checked < 40 {
		t.Errorf("checked %d \"It imports\" sentences; want every package doc's (over 40)", checked)
	}
}

// packageDocs are p's package comments.
func packageDocs(t *testing.T, p pkg) []docText {
	t.Helper()
	var docs []docText
	fset := token.NewFileSet()
	files := p.GoFiles
	if len(files) == 0 {
		files = p.TestGoFiles
	}
	for _, f := range files {
		path := filepath.Join(p.Dir, f)
		file, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		if file.Doc != nil {
			docs = append(docs, docText{path: rel(path), text: file.Doc.Text()})
		}
	}
	return docs
}

// importSentenceRE is a sentence that says what a package imports, up to
// the period that ends it (one followed by a space or the end).
var importSentenceRE = regexp.MustCompile(`\bIt imports (.+?)\.(?:\s|$)`)

// importSentences are the claims of text's "It imports" sentences: what
// follows "It imports", on one line.
func importSentences(text string) []string {
	var out []string
	for _, m := range importSentenceRE.FindAllStringSubmatch(strings.Join(strings.Fields(text), " "), -1) {
		out = append(out, m[1])
	}
	return out
}

// importClaim is one sentence read: the items it names, whether it says
// that is all ("only"), and what it says is never imported.
type importClaim struct {
	named []importItem
	only  bool
	never []importItem
}

// importItem is one named thing: the paths it stands for.
type importItem struct {
	text  string
	paths []string
}

var (
	parensRE   = regexp.MustCompile(`\s*\([^()]*\)`)
	itemSepRE  = regexp.MustCompile(`\s*,\s*(?:and\s+|plus\s+)?|\s+and\s+|\s+plus\s+|\s+or\s+`)
	importPath = regexp.MustCompile(`^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)+/[\w./-]*[\w/]|(?:agent|api|client|cmd|deploy|hub|internal|test)(?:/[\w.-]+)*/?)`)
)

// parseImportSentence reads a sentence's claim; problems are items it
// cannot read.
func parseImportSentence(s string) (importClaim, []string) {
	var c importClaim
	var problems []string
	claim := parensRE.ReplaceAllString(s, "")
	if i := strings.IndexAny(claim, ";:"); i >= 0 {
		claim = claim[:i]
	}
	positive, negative, _ := strings.Cut(claim, "never ")
	positive = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(positive), ","))
	if rest, ok := strings.CutPrefix(positive, "only "); ok {
		positive, c.only = rest, true
	}
	if rest, ok := strings.CutSuffix(positive, " only"); ok {
		positive, c.only = rest, true
	}
	for _, part := range []struct {
		text string
		into *[]importItem
	}{{positive, &c.named}, {negative, &c.never}} {
		if strings.TrimSpace(part.text) == "" {
			continue
		}
		for _, text := range itemSepRE.Split(strings.TrimSpace(part.text), -1) {
			item, err := readImportItem(text)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			if item.text == "nothing" {
				c.only = true
			}
			*part.into = append(*part.into, item)
		}
	}
	return c, problems
}

// readImportItem reads one item: a path, or a phrase of importPhrases
// ("the" and a possessive's noun left out: "hub/store's Fence").
func readImportItem(text string) (importItem, error) {
	text = strings.TrimPrefix(strings.TrimSpace(text), "the ")
	if p := importPath.FindString(text); p != "" && !startsWord(text[len(p):]) {
		tree := strings.HasSuffix(p, "/")
		path := strings.TrimSuffix(p, "/")
		if !strings.Contains(strings.Split(path, "/")[0], ".") {
			path = module + "/" + path
		}
		if tree {
			path += "/..."
		}
		return importItem{text: p, paths: []string{path}}, nil
	}
	key := strings.ToLower(text)
	if i := strings.Index(key, "'"); i >= 0 {
		key = key[:i]
	}
	if paths, ok := importPhrases[key]; ok {
		return importItem{text: key, paths: paths}, nil
	}
	return importItem{}, fmt.Errorf("names %q, which is neither a path (hub/store, api/, sigs.k8s.io/yaml) nor a name of importPhrases", text)
}

// startsWord says whether rest goes on with a letter or digit: then what
// looked like a path was the start of a word (api in apimachinery).
func startsWord(rest string) bool {
	return rest != "" && (unicode.IsLetter(rune(rest[0])) || unicode.IsDigit(rune(rest[0])))
}

// covers says whether item stands for the import path imp.
func (item importItem) covers(imp string) bool {
	for _, p := range item.paths {
		if tree, ok := strings.CutSuffix(p, "/..."); ok {
			if imp == tree || strings.HasPrefix(imp, tree+"/") {
				return true
			}
		} else if imp == p {
			return true
		}
	}
	return false
}

// standard says whether imp is the standard library's.
func standard(imp string) bool { return !strings.Contains(strings.Split(imp, "/")[0], ".") }

// checkImportSentence returns what is false in sentence s of a package
// that imports imports directly and deps in all.
func checkImportSentence(s string, imports, deps []string) []string {
	c, problems := parseImportSentence(s)
	for _, item := range c.named {
		if item.paths != nil && !slices.ContainsFunc(imports, item.covers) {
			problems = append(problems, fmt.Sprintf("names %s, which the package does not import", item.text))
		}
	}
	for _, imp := range imports {
		named := slices.ContainsFunc(c.named, func(item importItem) bool { return item.covers(imp) })
		switch {
		case named:
		case strings.HasPrefix(imp, module+"/"):
			problems = append(problems, fmt.Sprintf("does not name %s, which the package imports", strings.TrimPrefix(imp, module+"/")))
		case c.only && !standard(imp):
			problems = append(problems, fmt.Sprintf("says only, but the package imports %s", imp))
		}
	}
	for _, item := range c.never {
		for _, d := range deps {
			if item.covers(d) {
				problems = append(problems, fmt.Sprintf("says never %s, but the package depends on %s", item.text, d))
				break
			}
		}
	}
	return problems
}

func TestCheckImportSentence(t *testing.T) {
	store, clientv3 := module+"/hub/store", "go.etcd.io/etcd/client/v3"
	for _, tc := range []struct {
		name, sentence string
		imports, deps  []string
		want           int // problems
	}{
		{"true", "hub/store, the etcd client and go-hclog", []string{"context", store, clientv3, "github.com/hashicorp/go-hclog"}, nil, 0},
		{"a named import it lacks", "hub/store and hub/pki", []string{store}, nil, 1},
		{"an import of the module left out", "go-hclog", []string{store, "github.com/hashicorp/go-hclog"}, nil, 1},
		{"only, with another module's import", "only the standard library", []string{"fmt", clientv3}, nil, 1},
		{"only, with the standard library", "the standard library only", []string{"fmt", "sort"}, nil, 0},
		{"a tree", "api/ and Kubernetes API types (for Taint)", []string{module + "/api/cluster/v1alpha1", "k8s.io/api/core/v1"}, nil, 0},
		{"never, through another package", "hub/placement, never hub/store", []string{module + "/hub/placement"}, []string{store}, 1},
		{"prose after the claim", "hub/store; the interpreter comes in through Interpreter: x", []string{store}, nil, 0},
		{"a ; in parentheses", "hub/store (pure; for names) and go-hclog", []string{store}, nil, 1},
		{"a possessive", "hub/customizations' Subscription and internal/interpreter's ErrPending",
			[]string{module + "/hub/customizations", module + "/internal/interpreter"}, nil, 0},
		{"an unreadable item", "the pure decisions of the detector", nil, nil, 1},
		{"a word that starts like a path", "Kubernetes API types and apimachinery helpers", []string{"k8s.io/api/core/v1"}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkImportSentence(tc.sentence, tc.imports, tc.deps); len(got) != tc.want {
				t.Errorf("checkImportSentence(%q, %v) = %q; want %d problems", tc.sentence, tc.imports, got, tc.want)
			}
		})
	}
}

// TestInternalDocListsEveryPackage: the list in internal/doc.go names
// every package directly under internal/, and nothing else.
func TestInternalDocListsEveryPackage(t *testing.T) {
	want, listed := map[string]bool{}, map[string]bool{}
	for _, p := range packages(t) {
		if rest, ok := strings.CutPrefix(p.ImportPath, module+"/internal/"); ok && !strings.Contains(rest, "/") {
			want[rest] = true
		}
		if p.ImportPath != module+"/internal" {
			continue
		}
		for _, doc := range packageDocs(t, p) {
			for _, m := range listItemRE.FindAllStringSubmatch(doc.text, -1) {
				listed[m[1]] = true
			}
		}
	}
	for name := range want {
		if !listed[name] {
			t.Errorf("internal/doc.go does not list internal/%s", name)
		}
	}
	for name := range listed {
		if !want[name] {
			t.Errorf("internal/doc.go lists %s, which is no package under internal/", name)
		}
	}
}

// listItemRE is an item of a doc's list: "  - name: what it owns".
var listItemRE = regexp.MustCompile(`(?m)^\s*- (\w+):`)
