package codec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tetherproj/tether/api/codec"
)

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
spec:
  replicas: 2
`

func TestDecodeAll(t *testing.T) {
	input := "# leading comment\n---\n" + pp + "---\n# an empty document\n---\n" +
		minimal("policy.karmada.io/v1alpha1", "ClusterOverridePolicy") + "---\n" +
		minimal("config.karmada.io/v1alpha1", "ResourceInterpreterCustomization")
	objs, err := codec.DecodeAll([]byte(input))
	if err != nil {
		t.Fatalf("DecodeAll(three documents) = %v; want no error", err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetObjectKind().GroupVersionKind().Kind)
	}
	want := "PropagationPolicy,ClusterOverridePolicy,ResourceInterpreterCustomization"
	if strings.Join(kinds, ",") != want {
		t.Errorf("DecodeAll(three documents) kinds = %v; want %s", kinds, want)
	}
}

func TestDecodeAllJSONSequence(t *testing.T) {
	input := `{"apiVersion":"policy.tether.io/v1alpha1","kind":"ClusterOverridePolicy","metadata":{"name":"a"},"spec":{}}
{"apiVersion":"policy.tether.io/v1alpha1","kind":"ClusterOverridePolicy","metadata":{"name":"b"},"spec":{}}`
	objs, err := codec.DecodeAll([]byte(input))
	if err != nil || len(objs) != 2 || objs[1].GetName() != "b" {
		t.Errorf("DecodeAll(two JSON values) = %v, %v; want objects a and b", objs, err)
	}
}

func TestDecodeAllReportsEachFailingDocument(t *testing.T) {
	input := pp + "---\n" + pp + "    foo: 1\n---\n" + deployment + "---\n" + pp
	objs, err := codec.DecodeAll([]byte(input))
	if err == nil || objs != nil {
		t.Fatalf("DecodeAll(bad documents 2 and 3) = %v, %v; want no objects and an error", objs, err)
	}
	var indexes []int
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var derr *codec.DocumentError
		if !errors.As(e, &derr) {
			t.Fatalf("DecodeAll error %v; want *DocumentError values", e)
		}
		indexes = append(indexes, derr.Index)
	}
	if len(indexes) != 2 || indexes[0] != 2 || indexes[1] != 3 {
		t.Errorf("DecodeAll(bad documents 2 and 3) failed documents = %v; want [2 3]", indexes)
	}
	if !errors.Is(err, codec.ErrUnknownKind) {
		t.Errorf("DecodeAll(with a Deployment) = %v; want ErrUnknownKind among the errors", err)
	}
	if fes := codec.FieldErrors(err); len(fes) != 1 || fes[0].Path != "spec.placement.foo" {
		t.Errorf("FieldErrors(DecodeAll) = %v; want the unknown field of document 2", fes)
	}
	if !strings.Contains(err.Error(), "document 2 (PropagationPolicy default/nginx)") {
		t.Errorf("DecodeAll error = %q; want it to name document 2", err)
	}
}

func TestDecodeRefusesSeveralDocuments(t *testing.T) {
	_, err := codec.Decode([]byte(pp + "---\n" + pp))
	if !errors.Is(err, codec.ErrMultipleDocuments) {
		t.Errorf("Decode(two documents) = %v; want ErrMultipleDocuments", err)
	}
}

// TestSplitRoutesTemplates shows how a mixed input is routed: known
// documents are decoded, the others are resource templates.
func TestSplitRoutesTemplates(t *testing.T) {
	docs, err := codec.Split([]byte(deployment + "---\n" + pp))
	if err != nil || len(docs) != 2 {
		t.Fatalf("Split(deployment and policy) = %v, %v; want two documents", docs, err)
	}
	if docs[0].Known() || docs[0].Kind != "Deployment" || docs[0].APIVersion != "apps/v1" {
		t.Errorf("Split()[0] = %+v; want an unknown apps/v1 Deployment", docs[0])
	}
	if !docs[1].Known() {
		t.Fatalf("Split()[1] = %+v; want a known policy", docs[1])
	}
	if _, err := codec.DecodeDocument(&docs[1]); err != nil {
		t.Errorf("DecodeDocument(policy) = %v; want no error", err)
	}
}
