package codec_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tetherproj/tether/api/codec"
)

// aliasBomb expands to 10^5 scalars from a few hundred bytes.
const aliasBomb = `a: &a [x,x,x,x,x,x,x,x,x,x]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]
`

func TestDecodeHostileInput(t *testing.T) {
	deepYAML := "a:\n"
	for i := 1; i < 150; i++ {
		deepYAML += strings.Repeat(" ", i) + "- \n"
	}
	tests := []struct {
		name  string
		input string
		opts  []codec.Option
		want  error
	}{
		{"empty", "", nil, codec.ErrNoDocument},
		{"only comments", "# nothing\n---\n# here\n", nil, codec.ErrNoDocument},
		{"deep JSON", strings.Repeat("[", 5000) + strings.Repeat("]", 5000), nil, codec.ErrTooDeep},
		{"deep YAML flow", "a: " + strings.Repeat("[", 500) + strings.Repeat("]", 500), nil, codec.ErrTooDeep},
		{"deep YAML blocks", deepYAML, nil, codec.ErrTooDeep},
		{"deep but within a raised limit", strings.Replace(pp, "placement:", "placement:\n    foo: [[[[[[1]]]]]]\n    x:", 1),
			[]codec.Option{codec.WithMaxDepth(3)}, codec.ErrTooDeep},
		{"larger than the limit", pp + "# " + strings.Repeat("x", 2000) + "\n", []codec.Option{codec.WithMaxBytes(1000)}, codec.ErrTooLarge},
		{"larger than the default limit", strings.Repeat("#", codec.DefaultMaxBytes+1), nil, codec.ErrTooLarge},
		{"alias bomb", aliasBomb, nil, codec.ErrTooLarge},
		{"too many JSON documents", strings.Repeat("{}", codec.MaxDocuments+1), nil, codec.ErrTooLarge},
		{"too many YAML documents", strings.Repeat("a: 1\n---\n", codec.MaxDocuments+1), nil, codec.ErrTooLarge},
		{"invalid UTF-8", strings.Replace(pp, "nginx", "ngi\xffnx", 1), nil, codec.ErrSyntax},
		{"binary garbage", "\x00\x01\x02\xfe\xff", nil, codec.ErrSyntax},
		{"unterminated JSON", `{"apiVersion": "v1"`, nil, codec.ErrSyntax},
		{"top-level array", `[{"apiVersion":"v1"}]`, nil, codec.ErrSyntax},
		{"top-level scalar", "hello\n", nil, codec.ErrSyntax},
		{"YAML tab indentation", "a:\n\t- b\n", nil, codec.ErrSyntax},
		{"bad separator", pp + "--- {a: 1}\n", nil, codec.ErrSyntax},
		{"non-string map key", "apiVersion: v1\n? [a, b]\n: c\n", nil, codec.ErrSyntax},
		{"duplicate JSON key", `{"apiVersion":"policy.tether.io/v1alpha1","kind":"PropagationPolicy","metadata":{"name":"a","name":"b"}}`, nil, codec.ErrSyntax},
		{"duplicate JSON key in an array's object", `{"a":[{"b":1},{"b":1,"b":2}]}`, nil, codec.ErrSyntax},
		{"deep JSON beyond encoding/json's own limit", strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000), nil, codec.ErrTooDeep},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := codec.Decode([]byte(tt.input), tt.opts...)
			if !errors.Is(err, tt.want) {
				t.Errorf("Decode(%s) = %T, %v; want %v", tt.name, obj, err, tt.want)
			}
		})
	}
}

// TestSplitNamesDuplicateKeys: a JSON key given twice is refused with its
// path, as YAML's are; the same key in sibling objects is no duplicate.
func TestSplitNamesDuplicateKeys(t *testing.T) {
	tests := []struct{ input, want string }{
		{`{"metadata":{"name":"a","name":"b"}}`, `duplicate field "metadata.name"`},
		{`{"a":[{"b":1},{"b":1,"b":2}]}`, `duplicate field "a[1].b"`},
		{`{"a":1} {"b":{"c":[1,{"d":1}],"d":2,"d":3}}`, `document 2: codec: syntax error: duplicate field "b.d"`},
		{`[{"x":{"a":1},"y":{"a":1}}, {"a":1}]`, ""},
	}
	for _, tt := range tests {
		_, err := codec.Split([]byte(tt.input))
		if tt.want == "" {
			if err != nil {
				t.Errorf("Split(%s) = %v; want no error", tt.input, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, codec.ErrSyntax) {
			t.Errorf("Split(%s) = %v; want a syntax error saying %s", tt.input, err, tt.want)
		}
	}
}

func TestDecodeAcceptsSmallAliases(t *testing.T) {
	input := strings.Replace(pp, "    clusterAffinity:\n      clusterNames: [m1, m2]\n",
		"    clusterAffinity:\n      clusterNames: &names [m1, m2]\n      exclude: *names\n", 1)
	obj, err := codec.Decode([]byte(input))
	if err != nil {
		t.Fatalf("Decode(policy with an alias) = %v; want no error", err)
	}
	js, _ := codec.Encode(obj)
	if !strings.Contains(string(js), `"exclude":["m1","m2"]`) {
		t.Errorf("Encode(policy with an alias) = %s; want the alias expanded", js)
	}
}

// FuzzDecode checks that no input makes decoding, defaulting, validation or
// encoding panic, and that whatever decodes also re-decodes from its
// encoding. Run with: go test -fuzz=FuzzDecode -fuzztime=30s ./api/codec/
func FuzzDecode(f *testing.F) {
	seeds := []string{
		pp, aliasBomb, "", "---\n", "{}", "[]", "null", "a: 1\na: 2\n",
		minimal("policy.karmada.io/v1alpha1", "OverridePolicy"),
		minimal("config.karmada.io/v1alpha1", "ResourceInterpreterWebhookConfiguration"),
		minimal("cluster.tether.io/v1alpha1", "Cluster"),
		minimal("work.karmada.io/v1alpha2", "ResourceBinding"),
		pp + "  failover: {application: {decisionConditions: {tolerationSeconds: -1}, purgeMode: Never, gracePeriodSeconds: 5}}\n",
		pp + "    spreadConstraints: [{spreadByField: region}, {}]\n    replicaScheduling: {weightPreference: {staticWeightList: [{targetCluster: {fieldSelector: {matchExpressions: [{key: zone, operator: Gt}]}}, weight: 0}]}}\n",
		`{"apiVersion":"policy.tether.io/v1alpha1","kind":"ClusterOverridePolicy","metadata":{"name":"a"},"spec":{"overrideRules":[{"overriders":{"plaintext":[{"path":"/x","operator":"add","value":{"a":[1,2]}}]}}]}}`,
		strings.Repeat("[", 200),
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := codec.DecodeAll(data)
		if err != nil {
			return
		}
		for _, obj := range objs {
			clone, err := codec.Clone(obj)
			if err != nil {
				t.Fatalf("Clone(%s) = %v", obj.GetName(), err)
			}
			clone.SetDefaults()
			if before, after := errorKeys(obj.Validate()), errorKeys(clone.Validate()); before != after {
				t.Fatalf("Validate(%s) = %s before SetDefaults and %s after; want the same", data, before, after)
			}
			js, err := codec.Encode(obj)
			if err != nil {
				t.Fatalf("Encode(%s) = %v", obj.GetName(), err)
			}
			if _, err := codec.Decode(js); err != nil {
				t.Fatalf("Decode(Encode(%s)) = %v; want the encoding to decode", js, err)
			}
		}
	})
}

// errorKeys lists the paths and types of validation errors.
func errorKeys(errs field.ErrorList) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "%s:%s ", e.Field, e.Type)
	}
	return b.String()
}
