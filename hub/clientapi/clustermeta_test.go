package clientapi

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
)

func TestApplyMeta(t *testing.T) {
	cur := map[string]string{"env": "prod", "tier": "edge"}
	tests := []struct {
		name    string
		set     map[string]string
		remove  []string
		over    bool
		want    map[string]string
		wantErr error
	}{
		{"add", map[string]string{"gpu": "true"}, nil, false, map[string]string{"env": "prod", "tier": "edge", "gpu": "true"}, nil},
		{"same value needs no overwrite", map[string]string{"env": "prod"}, nil, false, cur, nil},
		{"other value refused", map[string]string{"env": "dev"}, nil, false, nil, ErrPrecondition},
		{"other value with overwrite", map[string]string{"env": "dev"}, nil, true, map[string]string{"env": "dev", "tier": "edge"}, nil},
		{"remove then set", map[string]string{"env": "dev"}, []string{"env"}, false, map[string]string{"env": "dev", "tier": "edge"}, nil},
		{"remove all", nil, []string{"env", "tier", "absent"}, false, nil, nil},
		{"invalid key", map[string]string{"a b": "x"}, nil, false, nil, ErrInvalid},
		{"invalid value", map[string]string{"k": "not valid!"}, nil, false, nil, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyMeta(cur, metaEdit{what: "label", set: tt.set, remove: tt.remove, overwrite: tt.over,
				validate: metav1validation.ValidateLabels})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("applyMeta(%s) error = %v; want %v", tt.name, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("applyMeta(%s) differs (-want +got):\n%s", tt.name, diff)
			}
		})
	}
	if cur["env"] != "prod" || len(cur) != 2 {
		t.Errorf("applyMeta changed its input: %v", cur)
	}
}
