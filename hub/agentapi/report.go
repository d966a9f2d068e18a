package agentapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Bounds of what one status report may carry (DESIGN §8: every input is
// bounded), besides the message size limit.
const (
	// MaxStatusJSONBytes is the largest status_json of one manifest: 64
	// KiB, far above a Deployment's status (about 2 KiB), so that one
	// report cannot bloat a binding towards etcd's request limit.
	MaxStatusJSONBytes = 64 << 10
	// MaxManifestMessageBytes is the longest message of one manifest.
	MaxManifestMessageBytes = 16 << 10
)

// ErrInvalidReport: a status report the hub refuses; it is dropped and the
// stream goes on (one bad report never ends a stream nor reaches a
// controller).
var ErrInvalidReport = errors.New("agentapi: invalid status report")

// ValidateStatusReport checks an agent-supplied status report at the
// protocol boundary: a work key and version, and per manifest a status_json
// that is empty or one JSON object of at most MaxStatusJSONBytes, a known
// health value and a bounded message. The error wraps ErrInvalidReport and
// names the work and the manifest.
func ValidateStatusReport(r *agentv1.StatusReport) error {
	if r.GetWorkKey() == "" || r.GetVersion() == "" {
		return fmt.Errorf("%w: work key and version are required", ErrInvalidReport)
	}
	for i, m := range r.GetManifests() {
		if err := validateManifest(m); err != nil {
			return fmt.Errorf("%w: work %q version %s manifest %d (%s %s/%s): %v", ErrInvalidReport,
				r.GetWorkKey(), r.GetVersion(), i, m.GetIdentity().GetKind(), m.GetIdentity().GetNamespace(), m.GetIdentity().GetName(), err)
		}
	}
	return nil
}

func validateManifest(m *agentv1.ManifestStatus) error {
	if _, ok := agentv1.Health_name[int32(m.GetHealth())]; !ok {
		return fmt.Errorf("unknown health %d", m.GetHealth())
	}
	if n := len(m.GetMessage()); n > MaxManifestMessageBytes {
		return fmt.Errorf("message of %d bytes, more than %d", n, MaxManifestMessageBytes)
	}
	return ValidateStatusJSON(m.GetStatusJson())
}

// ValidateStatusJSON checks one status_json: empty, or a JSON object of at
// most MaxStatusJSONBytes.
func ValidateStatusJSON(raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	if len(raw) > MaxStatusJSONBytes {
		return fmt.Errorf("status_json of %d bytes, more than %d", len(raw), MaxStatusJSONBytes)
	}
	if !json.Valid(raw) {
		return errors.New("status_json is not valid JSON")
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return errors.New("status_json is not a JSON object")
	}
	return nil
}
