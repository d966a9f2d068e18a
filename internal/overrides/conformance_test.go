package overrides

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/api/codec"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// caseDir holds the override conformance cases, copied from Karmada
// v1.18.2 runs into the policy API's testdata.
const caseDir = "../../api/policy/v1alpha1/testdata/conformance/placement/override"

// overrideCase is one conformance case file (see the placement README).
type overrideCase struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Conformance string `json:"conformance"`
	Note        string `json:"note"`
	Input       struct {
		Object                  json.RawMessage   `json:"object"`
		ObjectYAML              string            `json:"objectYAML"`
		Cluster                 caseCluster       `json:"cluster"`
		ClusterOverridePolicies []json.RawMessage `json:"clusterOverridePolicies"`
		OverridePolicies        []json.RawMessage `json:"overridePolicies"`
	} `json:"input"`
	Expected struct {
		Object map[string]any `json:"object"`
		Error  string         `json:"error"`
	} `json:"expected"`
	Karmada struct {
		AppliedOverrides        json.RawMessage `json:"appliedOverrides"`
		AppliedClusterOverrides json.RawMessage `json:"appliedClusterOverrides"`
		ApplicationOrder        []string        `json:"applicationOrder"`
	} `json:"karmada"`
}

// caseCluster is a case's target cluster.
type caseCluster struct {
	Name     string            `json:"name"`
	Labels   map[string]string `json:"labels"`
	Provider string            `json:"provider"`
	Region   string            `json:"region"`
	Zone     string            `json:"zone"`
	Zones    []string          `json:"zones"`
}

// mayDiffer maps each may-differ case to the test of Tether's documented
// behaviour (README.md, "Where Tether differs from Karmada"). A new
// may-differ case fails until a behaviour is chosen for it.
var mayDiffer = map[string]func(*testing.T, *overrideCase){}

func TestOverrideConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(caseDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no override cases in %s (err %v)", caseDir, err)
	}
	var must, mustPassed int
	for _, f := range files {
		c := readCase(t, f)
		if c.Conformance != "must" {
			t.Run(c.Name, func(t *testing.T) {
				check, ok := mayDiffer[c.Name]
				if !ok {
					t.Fatalf("%s is %q with no documented Tether behaviour; note: %s", c.Name, c.Conformance, c.Note)
				}
				check(t, c)
			})
			continue
		}
		must++
		if t.Run(c.Name, func(t *testing.T) { checkCase(t, c) }) {
			mustPassed++
		}
	}
	t.Logf("override conformance must %d/%d", mustPassed, must)
}

// checkCase applies a case's policies and compares with Karmada's result.
func checkCase(t *testing.T, c *overrideCase) {
	obj, cluster, cops, ops := caseInput(t, c)
	res, err := Apply(obj, cluster, cops, ops)
	if c.Expected.Error != "" {
		if err == nil || !strings.Contains(err.Error(), c.Expected.Error) {
			t.Fatalf("Apply(%s) error = %v; want it to say %q", c.Name, err, c.Expected.Error)
		}
		return
	}
	if err != nil {
		t.Fatalf("Apply(%s) error = %v; want %s", c.Name, err, c.Description)
	}
	if diff := cmp.Diff(jsonValue(t, c.Expected.Object), jsonValue(t, res.Object.Object)); diff != "" {
		t.Errorf("Apply(%s) object (-want +got):\n%s", c.Name, diff)
	}
	checkApplied(t, "applied overrides", c.Karmada.AppliedOverrides, res.Overrides)
	checkApplied(t, "applied cluster overrides", c.Karmada.AppliedClusterOverrides, res.ClusterOverrides)
	checkOrder(t, c, res)
}

// eventRegexp extracts the policy from Karmada's ApplyOverridePolicySucceed
// events, one per applied rule in application order.
var eventRegexp = regexp.MustCompile(`Apply (cluster override|override) policy\(([^)]*)\) for cluster`)

// checkOrder compares the application order with Karmada's events.
func checkOrder(t *testing.T, c *overrideCase, res *Result) {
	t.Helper()
	var want, got []string
	for _, e := range c.Karmada.ApplicationOrder {
		if m := eventRegexp.FindStringSubmatch(e); m != nil {
			want = append(want, m[2])
		}
	}
	for _, a := range res.ClusterOverrides {
		got = append(got, a.PolicyName)
	}
	for _, a := range res.Overrides {
		got = append(got, res.Object.GetNamespace()+"/"+a.PolicyName)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Apply(%s) application order (-karmada +tether):\n%s", c.Name, diff)
	}
}

// checkApplied compares Tether's applied records, sorted by name as in the
// annotation, with Karmada's. Null values count as absent: Karmada encodes
// a plaintext item without value as "value": null, Tether omits it.
func checkApplied(t *testing.T, what string, karmada json.RawMessage, applied []Applied) {
	t.Helper()
	var want any
	if len(karmada) > 0 {
		want = dropNulls(jsonValue(t, karmada))
	}
	var got any
	if len(applied) > 0 {
		got = dropNulls(jsonValue(t, SortedByName(applied)))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-karmada +tether):\n%s", what, diff)
	}
}

// caseInput decodes a case's object, cluster and policies; the policies
// are defaulted and validated as the hub's API does on admission.
func caseInput(t *testing.T, c *overrideCase) (*unstructured.Unstructured, *clusterv1alpha1.Cluster,
	[]policyv1alpha1.ClusterOverridePolicy, []policyv1alpha1.OverridePolicy) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if c.Input.ObjectYAML != "" {
		obj = object(t, c.Input.ObjectYAML)
	} else if err := obj.UnmarshalJSON(c.Input.Object); err != nil {
		t.Fatalf("decode %s input.object: %v", c.Name, err)
	}
	cl := c.Input.Cluster
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: cl.Name, Labels: cl.Labels},
		Spec:       clusterv1alpha1.ClusterSpec{Provider: cl.Provider, Region: cl.Region, Zone: cl.Zone, Zones: cl.Zones},
	}
	var cops []policyv1alpha1.ClusterOverridePolicy
	for _, raw := range c.Input.ClusterOverridePolicies {
		cops = append(cops, *decodeAs[*policyv1alpha1.ClusterOverridePolicy](t, raw))
	}
	var ops []policyv1alpha1.OverridePolicy
	for _, raw := range c.Input.OverridePolicies {
		ops = append(ops, *decodeAs[*policyv1alpha1.OverridePolicy](t, raw))
	}
	return obj, cluster, cops, ops
}

// decodePolicy decodes a policy as the hub's API does on admission:
// strictly (api/codec), then defaults, then validation. The cases' policies
// were accepted by Karmada, so Tether must accept them too.
func decodePolicy(t *testing.T, raw json.RawMessage) codec.Object {
	t.Helper()
	obj, err := codec.Decode(raw)
	if err != nil {
		t.Fatalf("decode policy: %v", err)
	}
	obj.SetDefaults()
	if errs := obj.Validate(); len(errs) > 0 {
		t.Errorf("%s %s, accepted by Karmada, is invalid: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), errs.ToAggregate())
	}
	return obj
}

// decodeAs decodes a policy that must be of type T.
func decodeAs[T codec.Object](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	obj := decodePolicy(t, raw)
	p, ok := obj.(T)
	if !ok {
		t.Fatalf("decoded a %T; want a %T", obj, p)
	}
	return p
}

// readCase reads one case file.
func readCase(t *testing.T, path string) *overrideCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := &overrideCase{}
	if err := json.Unmarshal(b, c); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return c
}

// jsonValue returns v as decoded generic JSON, for comparisons.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatalf("encode: %v", err)
		}
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return out
}

// dropNulls removes map entries whose value is null, recursively.
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(e)
		}
	case []any:
		for i := range x {
			x[i] = dropNulls(x[i])
		}
	}
	return v
}
