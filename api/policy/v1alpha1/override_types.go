package v1alpha1

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OverridePolicy rewrites the templates of its own namespace per cluster.
type OverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired behavior of the policy.
	Spec OverrideSpec `json:"spec"`
}

// OverridePolicyList is a list of OverridePolicy.
type OverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OverridePolicy `json:"items"`
}

// ClusterOverridePolicy is the cluster-scoped OverridePolicy; it applies
// before the OverridePolicies of a template's namespace.
type ClusterOverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired behavior of the policy.
	Spec OverrideSpec `json:"spec"`
}

// ClusterOverridePolicyList is a list of ClusterOverridePolicy.
type ClusterOverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterOverridePolicy `json:"items"`
}

// OverrideSpec is the desired behavior of a (Cluster)OverridePolicy.
type OverrideSpec struct {
	// ResourceSelectors restrict the templates; empty matches all.
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`

	// OverrideRules are applied in order to every cluster they target.
	OverrideRules []RuleWithCluster `json:"overrideRules,omitempty"`

	// TargetCluster is the deprecated single-rule form's cluster filter;
	// it cannot be set together with OverrideRules.
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// Overriders is the deprecated single-rule form's overriders; it cannot
	// be set together with OverrideRules. Karmada always encodes this field;
	// Tether omits it when empty so that policies round-trip as written.
	Overriders Overriders `json:"overriders,omitzero"`
}

// RuleWithCluster is one override rule.
type RuleWithCluster struct {
	// TargetCluster selects the clusters; nil selects all.
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// Overriders are the changes.
	Overriders Overriders `json:"overriders"`
}

// Overriders are the changes of one rule. Whatever their order here, they
// apply as ImageOverrider, CommandOverrider, ArgsOverrider, LabelsOverrider,
// AnnotationsOverrider, FieldOverrider, Plaintext.
type Overriders struct {
	Plaintext            []PlaintextOverrider       `json:"plaintext,omitempty"`
	ImageOverrider       []ImageOverrider           `json:"imageOverrider,omitempty"`
	CommandOverrider     []CommandArgsOverrider     `json:"commandOverrider,omitempty"`
	ArgsOverrider        []CommandArgsOverrider     `json:"argsOverrider,omitempty"`
	LabelsOverrider      []LabelAnnotationOverrider `json:"labelsOverrider,omitempty"`
	AnnotationsOverrider []LabelAnnotationOverrider `json:"annotationsOverrider,omitempty"`
	FieldOverrider       []FieldOverrider           `json:"fieldOverrider,omitempty"`
}

// OverriderOperator is an operation of an overrider.
type OverriderOperator string

// Overrider operators.
const (
	OverriderOpAdd     OverriderOperator = "add"
	OverriderOpRemove  OverriderOperator = "remove"
	OverriderOpReplace OverriderOperator = "replace"
)

// PlaintextOverrider is one RFC 6902 JSON patch operation.
type PlaintextOverrider struct {
	// Path is a JSON pointer into the object.
	Path string `json:"path"`

	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`

	// Value is any JSON value, kept verbatim; empty for remove.
	Value json.RawMessage `json:"value,omitempty"`

	// ValueFrom takes the value, a JSON string, from the target cluster
	// instead (Tether extension); add and replace only, not with Value.
	ValueFrom *ClusterValueSource `json:"valueFrom,omitempty"`
}

// ImageComponent is a part of an image reference
// ([registry/]repository[:tag|@digest]).
type ImageComponent string

// Image components.
const (
	Registry   ImageComponent = "Registry"
	Repository ImageComponent = "Repository"
	Tag        ImageComponent = "Tag"
)

// ImageOverrider rewrites one component of container images.
type ImageOverrider struct {
	// Predicate picks the image field; nil means the containers' images of
	// Pods and of the pod templates of known workloads.
	Predicate *ImagePredicate `json:"predicate,omitempty"`

	// Component is Registry, Repository or Tag.
	Component ImageComponent `json:"component"`

	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`

	// Value is the new or added text; ignored for remove.
	Value string `json:"value,omitempty"`

	// ValueFrom takes the value from the target cluster instead (Tether
	// extension); add and replace only, not with Value. The resulting
	// image must parse, and a Tag value must be a valid tag or digest.
	ValueFrom *ClusterValueSource `json:"valueFrom,omitempty"`
}

// ImagePredicate picks one image field.
type ImagePredicate struct {
	// Path is a JSON pointer to a string field holding an image.
	Path string `json:"path"`
}

// CommandArgsOverrider changes the command or args of the containers named
// ContainerName.
type CommandArgsOverrider struct {
	ContainerName string `json:"containerName"`

	// Operator is add (append Value) or remove (drop every item equal to one
	// of Value).
	Operator OverriderOperator `json:"operator"`

	Value []string `json:"value,omitempty"`

	// ValueFrom are more values taken from the target cluster (Tether
	// extension), one item each, after Value's.
	ValueFrom []ClusterValueSource `json:"valueFrom,omitempty"`
}

// LabelAnnotationOverrider changes labels or annotations.
type LabelAnnotationOverrider struct {
	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`

	// Value holds the keys (and, for add and replace, values).
	Value map[string]string `json:"value,omitempty"`

	// ValueFrom holds more keys whose values come from the target cluster
	// (Tether extension); add and replace only, no key also in Value.
	ValueFrom map[string]ClusterValueSource `json:"valueFrom,omitempty"`
}

// FieldOverrider patches a JSON or YAML document held in a string field,
// such as a ConfigMap key. Exactly one of JSON and YAML is set.
type FieldOverrider struct {
	// FieldPath is a JSON pointer to the string field.
	FieldPath string `json:"fieldPath"`

	JSON []JSONPatchOperation `json:"json,omitempty"`
	YAML []YAMLPatchOperation `json:"yaml,omitempty"`
}

// JSONPatchOperation is one patch operation on a JSON document.
type JSONPatchOperation struct {
	// SubPath is a JSON pointer inside the document.
	SubPath string `json:"subPath"`

	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`

	// Value is any JSON value, kept verbatim.
	Value json.RawMessage `json:"value,omitempty"`

	// ValueFrom takes the value, a string, from the target cluster instead
	// (Tether extension); add and replace only, not with Value.
	ValueFrom *ClusterValueSource `json:"valueFrom,omitempty"`
}

// YAMLPatchOperation is one patch operation on a YAML document.
type YAMLPatchOperation struct {
	// SubPath is a JSON pointer inside the document.
	SubPath string `json:"subPath"`

	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`

	// Value is any JSON value, kept verbatim.
	Value json.RawMessage `json:"value,omitempty"`

	// ValueFrom takes the value, a string, from the target cluster instead
	// (Tether extension); add and replace only, not with Value.
	ValueFrom *ClusterValueSource `json:"valueFrom,omitempty"`
}
