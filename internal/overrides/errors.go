package overrides

import (
	"fmt"
	"path"
)

// Error reports which policy, rule and overrider failed to apply. When
// any overrider fails, no object is produced for the cluster.
type Error struct {
	// Kind is "ClusterOverridePolicy" or "OverridePolicy".
	Kind string
	// Policy is the policy's name, namespace/name for an OverridePolicy.
	Policy string
	// Rule is the index in spec.overrideRules, or -1 for the deprecated
	// spec.targetCluster/spec.overriders pair.
	Rule int
	// Overrider names the failed overrider, e.g. "imageOverrider[1]".
	Overrider string
	// Err is the underlying failure, worded as Karmada's where it has one.
	Err error
}

func (e *Error) Error() string {
	rule := fmt.Sprintf("overrideRules[%d]", e.Rule)
	if e.Rule < 0 {
		rule = "spec.overriders"
	}
	return fmt.Sprintf("overrides: apply %s %s %s %s: %v", e.Kind, e.Policy, rule, e.Overrider, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// overriderError carries the name of the failed overrider up to the rule.
type overriderError struct {
	name string
	err  error
}

func (e *overriderError) Error() string { return e.name + ": " + e.err.Error() }

func (e *overriderError) Unwrap() error { return e.err }

// overriderErr wraps err with the overrider kind and index.
func overriderErr(kind string, i int, err error) error {
	return &overriderError{name: fmt.Sprintf("%s[%d]", kind, i), err: err}
}

// newError builds the Error of policy p's rule i.
func newError(p policy, i int, legacy bool, err error) *Error {
	e := &Error{Kind: p.kind, Policy: path.Join(p.namespace, p.name), Rule: i, Err: err}
	if legacy {
		e.Rule = -1
	}
	if oe, ok := err.(*overriderError); ok {
		e.Overrider, e.Err = oe.name, oe.err
	}
	return e
}
