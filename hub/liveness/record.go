package liveness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/proto"
)

// beat is the value of /tether/liveness/beat/<cluster>: a renewal, small
// whatever the heartbeat (an agent's API enablements alone can take tens
// of kilobytes), written every PublisherConfig.Refresh.
type beat struct {
	// Replica names the publisher, for operators.
	Replica string `json:"replica"`
	// At is when the publisher received the heartbeat, Unix milliseconds by
	// its clock; read only when listing (a record older than a lease does
	// not renew anything).
	At int64 `json:"at"`
	// Digest identifies the heartbeat renewed: the one in
	// /tether/liveness/hb/<cluster> with the same digest.
	Digest string `json:"digest"`
}

// content is the value of /tether/liveness/hb/<cluster>: the heartbeat,
// written only when its content changes.
type content struct {
	// Heartbeat is the agentv1.Heartbeat, protobuf-encoded.
	Heartbeat []byte `json:"heartbeat"`
}

// encoded is a heartbeat ready to publish.
type encoded struct {
	content []byte // the content record
	digest  string
}

func encodeHeartbeat(hb *agentv1.Heartbeat) (encoded, error) {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(hb)
	if err != nil {
		return encoded{}, fmt.Errorf("encode heartbeat: %w", err)
	}
	sum := sha256.Sum256(raw)
	data, err := json.Marshal(content{Heartbeat: raw})
	return encoded{content: data, digest: hex.EncodeToString(sum[:12])}, err
}

func encodeBeat(replica string, at time.Time, digest string) ([]byte, error) {
	return json.Marshal(beat{Replica: replica, At: at.UnixMilli(), Digest: digest})
}

func decodeBeat(data []byte) (beat, error) {
	var b beat
	if err := json.Unmarshal(data, &b); err != nil {
		return beat{}, fmt.Errorf("decode liveness renewal: %w", err)
	}
	return b, nil
}

// decodeContent returns the heartbeat of a content record and its digest.
func decodeContent(data []byte) (*agentv1.Heartbeat, string, error) {
	var c content
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, "", fmt.Errorf("decode heartbeat record: %w", err)
	}
	hb := &agentv1.Heartbeat{}
	if err := proto.Unmarshal(c.Heartbeat, hb); err != nil {
		return nil, "", fmt.Errorf("decode heartbeat: %w", err)
	}
	sum := sha256.Sum256(c.Heartbeat)
	return hb, hex.EncodeToString(sum[:12]), nil
}
