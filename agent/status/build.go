package status

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tetherproj/tether/agent/apply"
	"github.com/tetherproj/tether/agent/customizations"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Interpreter is what the reporter needs of internal/interpreter.
type Interpreter interface {
	ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (*runtime.RawExtension, error)
	// HealthWithError is Karmada's work-status rule (no hook: Healthy, an
	// error: Unknown) with the error that made the object Unknown.
	HealthWithError(ctx context.Context, obj *unstructured.Unstructured) (configv1alpha1.ResourceHealth, error)
}

// Build assembles the report of one work snapshot, with its digest and
// without observe_time (the caller sets it when sending).
func Build(ctx context.Context, in Interpreter, s apply.Snapshot) *agentv1.StatusReport {
	r := &agentv1.StatusReport{WorkKey: s.Key, Version: s.Version}
	for _, o := range s.Objects {
		r.Manifests = append(r.Manifests, manifestStatus(ctx, in, o))
	}
	r.Digest = Digest(r)
	return r
}

// manifestStatus is one object's status, health and apply state.
func manifestStatus(ctx context.Context, in Interpreter, o apply.ObjectState) *agentv1.ManifestStatus {
	m := &agentv1.ManifestStatus{
		Identity: o.Identity,
		Health:   agentv1.Health_HEALTH_UNKNOWN,
		Applied:  o.Result == agentv1.ApplyResult_APPLY_RESULT_APPLIED && o.Observed != nil,
		Message:  o.Message,
	}
	if o.Observed == nil {
		if m.Message == "" {
			m.Message = "not found in the member cluster"
		}
		return m
	}
	h, err := in.HealthWithError(ctx, o.Observed)
	m.Health = health(h)
	if err != nil {
		m.Message = join(m.Message, fmt.Sprintf("interpret health: %v", customizations.Explain(err)))
	}
	raw, err := in.ReflectStatus(ctx, o.Observed)
	switch {
	case err != nil:
		m.Message = join(m.Message, fmt.Sprintf("reflect status: %v", customizations.Explain(err)))
	case raw != nil && len(raw.Raw) > 0 && string(raw.Raw) != "null":
		m.StatusJson = raw.Raw
	}
	return m
}

// maxMessageBytes bounds a manifest's message, in bytes: a quarter of the
// hub's limit (hub/agentapi.MaxManifestMessageBytes, 16 KiB), over which
// it refuses the whole report; an interpreter error with a Lua traceback
// fits.
const maxMessageBytes = 4 << 10

// join appends b to a, "; " between, within maxMessageBytes.
func join(a, b string) string {
	if a != "" {
		b = a + "; " + b
	}
	if len(b) > maxMessageBytes {
		b = strings.ToValidUTF8(b[:maxMessageBytes-3], "") + "..."
	}
	return b
}

// health maps the interpreter's health to the protocol's.
func health(h configv1alpha1.ResourceHealth) agentv1.Health {
	switch h {
	case configv1alpha1.ResourceHealthy:
		return agentv1.Health_HEALTH_HEALTHY
	case configv1alpha1.ResourceUnhealthy:
		return agentv1.Health_HEALTH_UNHEALTHY
	default:
		return agentv1.Health_HEALTH_UNKNOWN
	}
}

// Digest is the hex SHA-256 (first 16 bytes) of the report's key, version
// and items in deterministic protobuf encoding; digest and observe_time
// are not part of it.
func Digest(r *agentv1.StatusReport) string {
	c := &agentv1.StatusReport{WorkKey: r.GetWorkKey(), Version: r.GetVersion(), Manifests: r.GetManifests()}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	if err != nil {
		// Marshal fails only on invalid UTF-8 in strings, which the API
		// server never returns; hash the text form so the digest still
		// changes with the content.
		b = []byte(c.String())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
