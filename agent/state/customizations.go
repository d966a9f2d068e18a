package state

import (
	"context"
	"encoding/json"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// customizationsBlob is the blob (and file) of the interpreter
// customizations the agent holds.
const customizationsBlob = customizationsFile

type customizationsDoc struct {
	FormatVersion int             `json:"format_version"`
	Set           json.RawMessage `json:"set"` // protojson of Customizations
}

// PutCustomizations records the set of interpreter customizations the
// agent holds (the hub's last Customizations), replacing the previous one.
func (s *Store) PutCustomizations(ctx context.Context, set *agentv1.Customizations) error {
	data, err := protojson.Marshal(set)
	if err != nil {
		return err
	}
	return s.write(ctx, customizationsBlob, customizationsDoc{FormatVersion: formatVersion, Set: data})
}

// loadCustomizations reads the customizations blob; nil when there is none.
func (s *Store) loadCustomizations(blobs map[string][]byte) (*agentv1.Customizations, error) {
	if _, ok := blobs[customizationsBlob]; !ok {
		return nil, nil
	}
	var doc customizationsDoc
	if err := s.decode(blobs, customizationsBlob, &doc, func() int { return doc.FormatVersion }, formatVersion); err != nil {
		return nil, err
	}
	set := &agentv1.Customizations{}
	if err := protojson.Unmarshal(doc.Set, set); err != nil {
		return nil, s.corrupt(customizationsBlob, err)
	}
	return set, nil
}
