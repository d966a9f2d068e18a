package clusters

import (
	"encoding/json"
	"fmt"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/proto"
)

// record is the value of /tether/liveness/<cluster>: the cluster's last
// heartbeat as the replica holding its stream published it.
type record struct {
	// Replica names the publisher, for operators.
	Replica string `json:"replica"`
	// At is when the publisher received the heartbeat, Unix milliseconds by
	// its clock; read only when listing (a record older than a lease does
	// not renew anything).
	At int64 `json:"at"`
	// Heartbeat is the agentv1.Heartbeat, protobuf-encoded.
	Heartbeat []byte `json:"heartbeat"`
}

func encodeRecord(replica string, at time.Time, hb *agentv1.Heartbeat) ([]byte, error) {
	raw, err := proto.Marshal(hb)
	if err != nil {
		return nil, fmt.Errorf("encode heartbeat: %w", err)
	}
	return json.Marshal(record{Replica: replica, At: at.UnixMilli(), Heartbeat: raw})
}

func decodeRecord(data []byte) (time.Time, *agentv1.Heartbeat, error) {
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return time.Time{}, nil, fmt.Errorf("decode liveness record: %w", err)
	}
	hb := &agentv1.Heartbeat{}
	if err := proto.Unmarshal(r.Heartbeat, hb); err != nil {
		return time.Time{}, nil, fmt.Errorf("decode heartbeat: %w", err)
	}
	return time.UnixMilli(r.At), hb, nil
}
