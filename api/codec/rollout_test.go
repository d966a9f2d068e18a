package codec_test

import (
	"strings"
	"testing"

	"github.com/tetherproj/tether/api/codec"
)

// TestRolloutPolicyUnknownFieldRefused: a RolloutPolicy field Tether does
// not implement is refused at decode, naming the field.
func TestRolloutPolicyUnknownFieldRefused(t *testing.T) {
	doc := "apiVersion: policy.tether.io/v1alpha1\nkind: RolloutPolicy\nmetadata: {name: a, namespace: default}\n" +
		"spec: {resourceSelectors: [{apiVersion: v1, kind: ConfigMap}], rolloutStrategy: {type: Progressive, progressive: {maxConcurrency: 1, minSucessTime: 5s}}}\n"
	_, err := codec.Decode([]byte(doc))
	if err == nil || !strings.Contains(err.Error(), "minSucessTime") {
		t.Errorf("Decode(RolloutPolicy with a misspelt field) = %v; want an error naming minSucessTime", err)
	}
}
