package clientapi

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tetherproj/tether/hub/pipeline/work"
)

// strategyErrors refuses a template whose apply.tether.io/strategy
// annotation names no strategy, naming the annotation and the allowed
// values (work.ApplyStrategyOf decides, as when the work is rendered).
func strategyErrors(meta map[string]any) field.ErrorList {
	raw, _ := meta["annotations"].(map[string]any)
	v, ok := raw[work.AnnotationApplyStrategy].(string)
	if !ok {
		return nil // absent, or not a string: annotationErrors says so
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAnnotations(map[string]string{work.AnnotationApplyStrategy: v})
	if _, err := work.ApplyStrategyOf(u); err != nil {
		return field.ErrorList{field.NotSupported(field.NewPath("metadata", "annotations").Key(work.AnnotationApplyStrategy), v, work.StrategyNames())}
	}
	return nil
}
