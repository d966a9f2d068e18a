package state

import (
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Work is one work the agent holds: what the hub sent in a WorkUpsert. It is
// what agent/apply applies; treat it as read-only (the manifests are shared,
// not copied).
type Work struct {
	// Key is the work's key, unique within the cluster.
	Key string
	// Version is the hub's hash of the work's content; acks and status
	// reports name it.
	Version string
	// Manifests are the objects, one Kubernetes object as JSON each, in
	// apply order (namespaces and CRDs first).
	Manifests [][]byte
	// Options say how to apply the objects; nil means the defaults
	// (server-side apply, conflict ABORT, deletion DELETE).
	Options *agentv1.ApplyOptions
	// Binding names the hub binding the work was rendered from, for the
	// ownership labels and annotations; may be nil.
	Binding *agentv1.BindingReference
}

// FromUpsert returns the work u carries.
func FromUpsert(u *agentv1.WorkUpsert) Work {
	return Work{
		Key:       u.GetWorkKey(),
		Version:   u.GetVersion(),
		Manifests: u.GetManifests(),
		Options:   u.GetApplyOptions(),
		Binding:   u.GetBinding(),
	}
}

// Upsert returns the WorkUpsert that carries w.
func (w Work) Upsert() *agentv1.WorkUpsert {
	return &agentv1.WorkUpsert{
		WorkKey:      w.Key,
		Version:      w.Version,
		Manifests:    w.Manifests,
		ApplyOptions: w.Options,
		Binding:      w.Binding,
	}
}

// DeletionPolicy returns the work's deletion policy, DELETE when unset.
func (w Work) DeletionPolicy() agentv1.DeletionPolicy {
	if p := w.Options.GetDeletionPolicy(); p != agentv1.DeletionPolicy_DELETION_POLICY_UNSPECIFIED {
		return p
	}
	return agentv1.DeletionPolicy_DELETION_POLICY_DELETE
}
