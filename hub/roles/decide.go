package roles

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Role is what a user may do, within its namespaces or fleet-wide.
type Role string

// The roles.
const (
	// Admin reads and writes; fleet-wide, it also writes cluster-scoped
	// objects and administers clusters, tokens and users.
	Admin Role = "admin"
	// Editor reads and writes namespaced objects (templates,
	// PropagationPolicies, OverridePolicies).
	Editor Role = "editor"
	// Viewer reads (Secrets without their data) and writes nothing.
	Viewer Role = "viewer"
)

// MaxNamespaces bounds the namespaces one grant may name.
const MaxNamespaces = 256

// Grant is what one user may do: Role in Namespaces, or fleet-wide when
// Namespaces is empty. The zero Grant allows nothing.
type Grant struct {
	Role       Role     `json:"role"`
	Namespaces []string `json:"namespaces,omitempty"`
}

// FleetWide reports whether g is not bound to namespaces.
func (g Grant) FleetWide() bool { return len(g.Namespaces) == 0 }

// In reports whether g covers namespace ns.
func (g Grant) In(ns string) bool { return g.FleetWide() || slices.Contains(g.Namespaces, ns) }

func (g Grant) String() string {
	switch {
	case g.Role == "":
		return "no role"
	case g.FleetWide():
		return "fleet-wide " + string(g.Role)
	}
	return fmt.Sprintf("%s of namespace(s) %s", g.Role, strings.Join(g.Namespaces, ", "))
}

// Validate checks a grant an admin asks for: a known role and at most
// MaxNamespaces distinct valid namespace names.
func (g Grant) Validate() error {
	switch g.Role {
	case Admin, Editor, Viewer:
	default:
		return fmt.Errorf("role %q: want admin, editor or viewer", g.Role)
	}
	if len(g.Namespaces) > MaxNamespaces {
		return fmt.Errorf("%d namespaces: at most %d", len(g.Namespaces), MaxNamespaces)
	}
	seen := make(map[string]bool, len(g.Namespaces))
	for _, ns := range g.Namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("namespace %q: %s", ns, strings.Join(errs, "; "))
		}
		if seen[ns] {
			return fmt.Errorf("namespace %q named twice", ns)
		}
		seen[ns] = true
	}
	return nil
}

// Verb is what a call does to its target.
type Verb int

// The verbs.
const (
	Read Verb = iota
	Write
)

func (v Verb) String() string {
	if v == Write {
		return "write"
	}
	return "read"
}

// AnyNamespace, as a Target's namespace, asks whether the user may use a
// verb in some namespace: the check a call makes before it knows which
// objects it touches (each of which it then decides on).
const AnyNamespace = "*"

// Target is what a call touches: a kind, and the namespace of the object
// ("" for a cluster-scoped kind or the hub's own records: clusters,
// tokens, users).
type Target struct {
	Kind      string
	Namespace string
}

// Kinds of the hub's own records, which are cluster-scoped targets.
const (
	KindCluster = "Cluster"
	KindToken   = "BootstrapToken"
	KindUser    = "User"
)

// ErrDenied: the user's grant does not allow the call.
var ErrDenied = errors.New("roles: permission denied")

// verdict is the outcome of the decision table.
type verdict int

const (
	allowed verdict = iota
	noRole
	readOnly
	otherNamespace
	clusterScoped
	adminOnly
)

// AdminKinds are namespaced kinds that only a fleet-wide admin writes: a
// FederatedResourceQuota bounds its namespace, so the namespace's own
// editors and admins must not raise it.
var AdminKinds = map[string]bool{"FederatedResourceQuota": true}

// decide is the decision table: reads of namespaced objects need any role
// in their namespace; writes need editor or admin there. Cluster-scoped
// objects are read with a fleet-wide role (cluster records with any role:
// placements name them) and written by a fleet-wide admin.
func decide(g Grant, v Verb, t Target) verdict {
	switch {
	case g.Role == "":
		return noRole
	case v == Write && g.Role == Viewer:
		return readOnly
	case v == Write && AdminKinds[t.Kind] && t.Namespace != "" && !(g.FleetWide() && g.Role == Admin):
		return adminOnly
	case t.Namespace == AnyNamespace:
		return allowed
	case t.Namespace != "" && g.In(t.Namespace):
		return allowed
	case t.Namespace != "":
		return otherNamespace
	case v == Read && (g.FleetWide() || t.Kind == KindCluster):
		return allowed
	case v == Write && g.FleetWide() && g.Role == Admin:
		return allowed
	}
	return clusterScoped
}

// Allows reports whether g may v the target t: Decide without the
// refusal's words, for the filters of lists and watches, which leave out
// what it refuses.
func Allows(g Grant, v Verb, t Target) bool { return decide(g, v, t) == allowed }

// Decide is the hub's one authorization decision: whether user, holding
// g, may v the target t (the table is decide's). It returns nil or an
// error wrapping ErrDenied that names the namespace or kind refused.
func Decide(user string, g Grant, v Verb, t Target) error {
	switch decide(g, v, t) {
	case allowed:
		return nil
	case noRole:
		return fmt.Errorf("%w: user %q has no role; an admin grants one (tetherctl user set-role)", ErrDenied, user)
	case readOnly:
		need := "an editor or admin"
		if t.Namespace == "" {
			need = "a fleet-wide admin"
		}
		return fmt.Errorf("%w: user %q is %s (the read-only role); writing %s needs %s", ErrDenied, user, g, t.Kind, need)
	case otherNamespace:
		return fmt.Errorf("%w: user %q is %s; may not %s %s in namespace %q", ErrDenied, user, g, v, t.Kind, t.Namespace)
	case adminOnly:
		return fmt.Errorf("%w: user %q is %s; writing %s (it bounds namespace %q) needs a fleet-wide admin", ErrDenied, user, g, t.Kind, t.Namespace)
	}
	need := "a fleet-wide role"
	if v == Write {
		need = "a fleet-wide admin"
	}
	return fmt.Errorf("%w: user %q is %s; %s %s (cluster-scoped) needs %s", ErrDenied, user, g, verbing(v), t.Kind, need)
}

func verbing(v Verb) string {
	if v == Write {
		return "writing"
	}
	return "reading"
}
