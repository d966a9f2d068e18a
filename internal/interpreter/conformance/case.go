package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// The two interpreters a case can target (case.json "interpreter").
const (
	Lua    = "lua"
	Native = "native"
)

// Error comparison modes (case.json "errorCompare").
const (
	ErrorExact    = "exact"
	ErrorContains = "contains"
)

// Case is one conformance case: a directory with case.json and its inputs.
type Case struct {
	// Dir is the case directory (absolute when Root was absolute).
	Dir string
	// Name is Dir relative to the suite root, with slashes:
	// "native/Pod/retain-01-..." or "cases/workload/...".
	Name        string
	Description string
	// Interpreter is Lua or Native.
	Interpreter string
	// Customization is the path of the RIC file (Lua cases only), resolved
	// against the suite root; empty for native cases.
	Customization string
	// Target is the GVK of the input object (case.json "target").
	Target    schema.GroupVersionKind
	Operation configv1alpha1.InterpreterOperation

	// Desired and Observed are the decoded input objects; either may be nil.
	Desired  *unstructured.Unstructured
	Observed *unstructured.Unstructured
	// StatusItems is nil when case.json says "statusItems": null (or has
	// no statusItems), and non-nil (possibly empty) when a file is given.
	StatusItems []configv1alpha1.AggregatedStatusItem
	// HasStatusItems reports whether inputs.statusItems named a file.
	HasStatusItems bool
	// Replicas is inputs.replicas (ReviseReplica).
	Replicas int64
	// FeatureGates are the Karmada feature gates enabled for the call.
	FeatureGates map[string]bool

	// IgnorePaths maps a result key to dotted paths deleted before comparing.
	IgnorePaths map[string][]string
	// SetKeys are result keys compared as multisets ("dependencies" when
	// compareAsSet is true).
	SetKeys []string
	// ErrorClass, ErrorCompare and ErrorContains describe the expected error.
	ErrorClass    string
	ErrorCompare  string
	ErrorContains string
	// Platform is "amd64" when the expected value is architecture specific.
	Platform         string
	Nondeterministic bool
	OracleCommand    string

	// Expected is the oracle's output; Alternatives are other accepted outputs.
	Expected     Expected
	Alternatives []Expected
}

// Expected is one accepted oracle output.
type Expected struct {
	Enabled bool
	// Error is the oracle's error text, nil when the call succeeded.
	Error *string
	// Results holds JSON values decoded with UseNumber (numbers are
	// json.Number); nil when the oracle printed no results.
	Results Results
	// FloatPaths lists, per object result key, the paths holding float64.
	FloatPaths map[string][]string
}

// Object returns the single input object of a one-object operation:
// Desired if present, else Observed.
func (c Case) Object() *unstructured.Unstructured {
	if c.Desired != nil {
		return c.Desired
	}
	return c.Observed
}

// SkipReason returns why the case cannot run on this machine, or "".
func (c Case) SkipReason() string {
	if c.Platform != "" && c.Platform != runtime.GOARCH {
		return fmt.Sprintf("expected value is specific to %s", c.Platform)
	}
	return ""
}

// FeatureGate reports whether the named Karmada feature gate is on.
func (c Case) FeatureGate(name string) bool { return c.FeatureGates[name] }

// Root returns the directory of the copied suite. It is found next to this
// source file, so tests in any package of the module can use it; in
// -trimpath builds it is found from the module root above the working
// directory.
func Root() string {
	const rel = "internal/interpreter/testdata/conformance/interpreter"
	if _, file, _, ok := runtime.Caller(0); ok {
		dir := filepath.Join(filepath.Dir(file), "..", "testdata", "conformance", "interpreter")
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
	}
	wd, err := os.Getwd()
	for d := wd; err == nil; d = filepath.Dir(d) {
		if _, statErr := os.Stat(filepath.Join(d, "go.mod")); statErr == nil {
			return filepath.Join(d, filepath.FromSlash(rel))
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return filepath.FromSlash(rel)
}

// LoadAll loads every case under root/cases and root/native, sorted by Name.
func LoadAll(root string) ([]Case, error) {
	var dirs []string
	for _, top := range []string{"cases", "native"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && d.Name() == "case.json" {
				dirs = append(dirs, filepath.Dir(p))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("conformance: walk %s: %w", top, err)
		}
	}
	sort.Strings(dirs)
	cases := make([]Case, 0, len(dirs))
	for _, d := range dirs {
		c, err := Load(root, d)
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// caseFile is case.json as written.
type caseFile struct {
	Description   string `json:"description"`
	Interpreter   string `json:"interpreter"`
	Customization string `json:"customization"`
	Target        string `json:"target"`
	Operation     string `json:"operation"`
	Inputs        struct {
		Desired     string      `json:"desired"`
		Observed    string      `json:"observed"`
		StatusItems *string     `json:"statusItems"`
		Replicas    json.Number `json:"replicas"`
	} `json:"inputs"`
	FeatureGates         string              `json:"featureGates"`
	IgnorePaths          map[string][]string `json:"ignorePaths"`
	CompareAsSet         json.RawMessage     `json:"compareAsSet"`
	ErrorClass           string              `json:"errorClass"`
	ErrorCompare         string              `json:"errorCompare"`
	ErrorContains        string              `json:"errorContains"`
	Platform             string              `json:"platform"`
	Nondeterministic     bool                `json:"nondeterministic"`
	OracleCommand        string              `json:"oracleCommand"`
	Expected             expectedFile        `json:"expected"`
	ExpectedAlternatives []expectedFile      `json:"expectedAlternatives"`
}

type expectedFile struct {
	Enabled    bool                `json:"enabled"`
	Error      *string             `json:"error"`
	Results    map[string]any      `json:"results"`
	FloatPaths map[string][]string `json:"floatPaths"`
}

func (e expectedFile) expected() Expected {
	return Expected{Enabled: e.Enabled, Error: e.Error, Results: e.Results, FloatPaths: e.FloatPaths}
}

// Load reads the case in dir; root is the suite root used for Name and the
// customization path.
func Load(root, dir string) (Case, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		return Case{}, fmt.Errorf("conformance: %w", err)
	}
	var f caseFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return Case{}, fmt.Errorf("conformance: decode %s/case.json: %w", dir, err)
	}
	c, err := f.toCase(root, dir)
	if err != nil {
		return Case{}, fmt.Errorf("conformance: case %s: %w", dir, err)
	}
	return c, nil
}

func (f caseFile) toCase(root, dir string) (Case, error) {
	name, err := filepath.Rel(root, dir)
	if err != nil {
		name = dir
	}
	c := Case{
		Dir: dir, Name: filepath.ToSlash(name), Description: f.Description,
		Interpreter: f.Interpreter, Operation: configv1alpha1.InterpreterOperation(f.Operation),
		FeatureGates: parseGates(f.FeatureGates), IgnorePaths: f.IgnorePaths,
		ErrorClass: f.ErrorClass, ErrorCompare: f.ErrorCompare, ErrorContains: f.ErrorContains,
		Platform: f.Platform, Nondeterministic: f.Nondeterministic, OracleCommand: f.OracleCommand,
		Expected: f.Expected.expected(),
	}
	if c.ErrorCompare == "" {
		c.ErrorCompare = ErrorExact
	}
	if f.Customization != "" {
		c.Customization = filepath.Join(root, filepath.FromSlash(f.Customization))
	}
	for _, alt := range f.ExpectedAlternatives {
		c.Alternatives = append(c.Alternatives, alt.expected())
	}
	if c.Target, err = parseTarget(f.Target); err != nil {
		return Case{}, err
	}
	if c.SetKeys, err = parseSetKeys(f.CompareAsSet); err != nil {
		return Case{}, err
	}
	return c, f.loadInputs(&c)
}

func (f caseFile) loadInputs(c *Case) error {
	var err error
	if f.Inputs.Desired != "" {
		if c.Desired, err = ReadObject(filepath.Join(c.Dir, f.Inputs.Desired)); err != nil {
			return err
		}
	}
	if f.Inputs.Observed != "" {
		if c.Observed, err = ReadObject(filepath.Join(c.Dir, f.Inputs.Observed)); err != nil {
			return err
		}
	}
	if f.Inputs.StatusItems != nil {
		c.HasStatusItems = true
		if c.StatusItems, err = ReadStatusItems(filepath.Join(c.Dir, *f.Inputs.StatusItems)); err != nil {
			return err
		}
	}
	if f.Inputs.Replicas != "" {
		if c.Replicas, err = f.Inputs.Replicas.Int64(); err != nil {
			return fmt.Errorf("inputs.replicas: %w", err)
		}
	}
	return nil
}

// parseTarget turns "apps/v1 Deployment" into a GVK.
func parseTarget(s string) (schema.GroupVersionKind, error) {
	apiVersion, kind, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return schema.GroupVersionKind{}, fmt.Errorf("target %q is not \"apiVersion kind\"", s)
	}
	return schema.FromAPIVersionAndKind(apiVersion, strings.TrimSpace(kind)), nil
}

// parseGates turns "A=true,B=false" into a map.
func parseGates(s string) map[string]bool {
	gates := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if k == "" {
			continue
		}
		on, err := strconv.ParseBool(v)
		gates[k] = err == nil && on
	}
	return gates
}

// parseSetKeys reads compareAsSet: true means "dependencies"; a list names
// the keys (the reference harness accepts both).
func parseSetKeys(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "false" {
		return nil, nil
	}
	if string(raw) == "true" {
		return []string{"dependencies"}, nil
	}
	var keys []string
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, fmt.Errorf("compareAsSet: %w", err)
	}
	return keys, nil
}
