package thirdparty_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/conformance"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
)

// document is one test case in testdata/<project>/<kind>.yaml, in the
// layout of Karmada's third-party test documents: inputs, the operation, and
// the expected results by result name. Error, when set, is a substring the
// operation's error must contain.
type document struct {
	Name          string                                `json:"name"`
	Operation     configv1alpha1.InterpreterOperation   `json:"operation"`
	DesiredObj    json.RawMessage                       `json:"desiredObj"`
	ObservedObj   json.RawMessage                       `json:"observedObj"`
	StatusItems   []configv1alpha1.AggregatedStatusItem `json:"statusItems"`
	InputReplicas int64                                 `json:"inputReplicas"`
	Output        map[string]any                        `json:"output"`
	Error         string                                `json:"error"`

	file string
}

func readDocuments(t *testing.T) []document {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no test documents (%v)", err)
	}
	var docs []document
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			var d document
			if err := dec.Decode(&d); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("decode %s: %v", p, err)
			}
			d.file = p
			docs = append(docs, d)
		}
	}
	return docs
}

func object(raw json.RawMessage) (*unstructured.Unstructured, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	obj := &unstructured.Unstructured{}
	return obj, obj.UnmarshalJSON(raw)
}

// run calls the operation on l, as the facade would for a third-party step.
func run(ctx context.Context, l *interpreter.LuaInterpreter, d document) (conformance.Results, error) {
	desired, err := object(d.DesiredObj)
	if err != nil {
		return nil, fmt.Errorf("desiredObj: %w", err)
	}
	observed, err := object(d.ObservedObj)
	if err != nil {
		return nil, fmt.Errorf("observedObj: %w", err)
	}
	obj := desired
	if obj == nil {
		obj = observed
	}
	switch d.Operation {
	case replica:
		r, req, _, err := l.GetReplicas(ctx, obj)
		if err != nil {
			return nil, err
		}
		return conformance.ReplicaResults(r, req)
	case component:
		comps, _, err := l.GetComponents(ctx, obj)
		if err != nil {
			return nil, err
		}
		return conformance.ComponentResults(comps)
	case revise:
		out, _, err := l.ReviseReplica(ctx, obj, d.InputReplicas)
		return conformance.RevisedResults(out), err
	case retain:
		out, _, err := l.Retain(ctx, desired, observed)
		return conformance.RetainedResults(out), err
	case aggregate:
		out, _, err := l.AggregateStatus(ctx, obj, d.StatusItems)
		return conformance.AggregatedStatusResults(out), err
	case status:
		out, _, err := l.ReflectStatus(ctx, obj)
		if err != nil {
			return nil, err
		}
		return conformance.StatusResults(out)
	case health:
		h, _, err := l.InterpretHealth(ctx, obj)
		return conformance.HealthResults(h), err
	case dependency:
		deps, _, err := l.GetDependencies(ctx, obj)
		if err != nil {
			return nil, err
		}
		return conformance.DependencyResults(deps)
	}
	return nil, fmt.Errorf("unknown operation %q", d.Operation)
}

// timeKeys are condition timestamps that aggregation stamps with "now".
var timeKeys = map[string]bool{"lastProbeTime": true, "lastTransitionTime": true, "lastUpdateTime": true}

// plain is v as encoding/json sees it, without timestamps if asked.
func plain(t *testing.T, v any, dropTimes bool) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if dropTimes {
		out = withoutTimes(out)
	}
	return out
}

func withoutTimes(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if timeKeys[k] {
				delete(v, k)
			} else {
				v[k] = withoutTimes(e)
			}
		}
	case []any:
		for i, e := range v {
			v[i] = withoutTimes(e)
		}
	}
	return v
}

func TestDocuments(t *testing.T) {
	l := interpreter.NewLuaInterpreter(luavm.New(luavm.Options{}))
	l.Load(loadAll(t))
	for _, d := range readDocuments(t) {
		kind := strings.TrimSuffix(filepath.Base(d.file), ".yaml")
		t.Run(kind+"/"+string(d.Operation)+"/"+d.Name, func(t *testing.T) {
			got, err := run(context.Background(), l, d)
			if d.Error != "" {
				if err == nil || !strings.Contains(err.Error(), d.Error) {
					t.Fatalf("%s = %v; want an error containing %q", d.Operation, err, d.Error)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s = %v", d.Operation, err)
			}
			dropTimes := d.Operation == aggregate
			for key, want := range d.Output {
				if diff := cmp.Diff(plain(t, want, dropTimes), plain(t, got[key], dropTimes)); diff != "" {
					t.Errorf("%s %s (-want +got):\n%s", d.Operation, key, diff)
				}
			}
		})
	}
}

// TestDocumentsCoverEveryOperation: each built-in kind has test documents
// for every operation it defines, and none for operations it does not.
func TestDocumentsCoverEveryOperation(t *testing.T) {
	covered := map[string]map[configv1alpha1.InterpreterOperation]int{}
	for _, d := range readDocuments(t) {
		obj, err := object(d.DesiredObj)
		if obj == nil || err != nil {
			obj, _ = object(d.ObservedObj)
		}
		if obj == nil {
			t.Fatalf("%s %q: no object", d.file, d.Name)
		}
		key := obj.GetAPIVersion() + "/" + obj.GetKind()
		if covered[key] == nil {
			covered[key] = map[configv1alpha1.InterpreterOperation]int{}
		}
		covered[key][d.Operation]++
		if len(d.Output) == 0 && d.Error == "" {
			t.Errorf("%s %q: no expected output", d.file, d.Name)
		}
	}
	for target, ops := range wantOperations {
		for _, op := range ops {
			if covered[target][op] == 0 {
				t.Errorf("%s %s: no test document", target, op)
			}
			delete(covered[target], op)
		}
		for op := range covered[target] {
			t.Errorf("%s: test documents for %s, which it does not define", target, op)
		}
	}
}
