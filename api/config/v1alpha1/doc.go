// Package v1alpha1 holds the config.tether.io/v1alpha1 objects: the
// ResourceInterpreterCustomization and ResourceInterpreterWebhookConfiguration
// that users write (Karmada's config.karmada.io/v1alpha1 decodes as an alias),
// and the values the resource interpreter exchanges with hooks: operations,
// replica requirements, components, status items and dependency references,
// with Karmada's field names so that webhooks and Lua scripts written for
// Karmada work unchanged.
//
// It imports only Kubernetes API packages (types, and apimachinery's
// validation helpers).
package v1alpha1
