// Package codec turns the YAML and JSON users write into Tether's API
// objects (api/policy, api/config, api/cluster, api/work and api/apps) and
// back.
//
// Decode and DecodeAll dispatch on apiVersion and kind. Tether's groups
// (policy.tether.io/v1alpha1, config.tether.io/v1alpha1,
// cluster.tether.io/v1alpha1, work.tether.io/v1alpha1,
// apps.tether.io/v1alpha1) are canonical; Karmada's
// (policy.karmada.io/v1alpha1, config.karmada.io/v1alpha1,
// cluster.karmada.io/v1alpha1, work.karmada.io/v1alpha2,
// apps.karmada.io/v1alpha1) decode into the
// same Go types, so existing Karmada YAML applies unchanged.
//
// Decoding keeps the apiVersion as written: a Karmada policy encodes back as
// a Karmada policy, so a round trip is lossless (see Encode for the two
// normalisations Karmada also makes). Canonical rewrites an object to
// Tether's group, for storage and comparison.
//
// Decoding is strict and never panics: unknown fields, duplicate fields and
// values of the wrong type fail with a *DocumentError holding one
// *FieldError per problem, each naming its field path
// (spec.placement.replicaScheduling.replicaSchedulingType: expected
// string, got number). Input larger than DefaultMaxBytes, nesting deeper
// than DefaultMaxDepth, YAML aliases that expand too far and invalid UTF-8
// are refused, and Split refuses a key given twice in one object in JSON as
// in YAML, for every document (templates too). Decoding applies no defaults and does not validate; the
// usual sequence is
//
//	obj, err := codec.Decode(data)
//	obj.SetDefaults()
//	errs := obj.Validate() // field.ErrorList, paths like spec.resourceSelectors[0].kind
//
// A document whose kind is not Tether's fails with ErrUnknownKind. Inputs
// that mix resource templates with policies are routed with Split and
// Document.Known (and OwnGroup, which catches unknown kinds in Tether's
// groups).
//
// It imports api/, Kubernetes API machinery, sigs.k8s.io/yaml and
// sigs.k8s.io/json (the YAML and JSON libraries Kubernetes uses), plus
// go.yaml.in/yaml/v3 to size YAML aliases before expanding them.
package codec
