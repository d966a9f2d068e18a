package agentapi

import (
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// wireCodec is the hub's gRPC codec (ServerOptions): grpc-go's protobuf
// codec, except that a HubMessage carrying a work is encoded once per
// WorkUpsert and the bytes sent to every stream that sends it. The
// renderer shares one upsert among the clusters a version goes to
// (hub/render), so a template Duplicated to a thousand clusters was
// encoded a thousand times: a million times 850 bytes allocated, and
// their collection, in make load-million. Upserts are never modified
// once rendered; a HubMessage is a oneof and nothing else, so its bytes
// are the work's.
type wireCodec struct {
	proto encoding.CodecV2
	works *encodedWorks
}

func newWireCodec() *wireCodec {
	return &wireCodec{proto: encoding.GetCodecV2(protocodec.Name), works: newEncodedWorks(encodedWorksMax, encodedWorksMaxBytes)}
}

// Name is the protobuf codec's: clients see no difference.
func (c *wireCodec) Name() string { return protocodec.Name }

// Marshal encodes v; a work's message comes from the shared encodings.
func (c *wireCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*agentv1.HubMessage); ok {
		if up := m.GetWorkUpsert(); up != nil {
			b, err := c.works.get(up)
			if err != nil {
				return nil, err
			}
			return mem.BufferSlice{mem.SliceBuffer(b)}, nil // never written to nor freed
		}
	}
	return c.proto.Marshal(v)
}

// Unmarshal is the protobuf codec's.
func (c *wireCodec) Unmarshal(data mem.BufferSlice, v any) error { return c.proto.Unmarshal(data, v) }

// option makes a gRPC server use c.
func (c *wireCodec) option() grpc.ServerOption { return grpc.ForceServerCodecV2(c) }

// The shared encodings kept: the latest encodedWorksMax works, at most
// encodedWorksMaxBytes of them. A version goes out to its clusters
// within moments (each stream sends its queue in order), so a window of
// recent works serves the fan-out; an encoding that dropped out is made
// again, as every one was before.
const (
	encodedWorksMax      = 4096
	encodedWorksMaxBytes = 32 << 20
)

// encodedWorks holds the wire form of the HubMessages of recent works,
// by upsert, oldest dropped first past its bounds.
type encodedWorks struct {
	maxWorks, maxBytes int

	mu    sync.Mutex
	bytes map[*agentv1.WorkUpsert][]byte
	order []*agentv1.WorkUpsert // oldest first
	size  int                   // bytes held
}

func newEncodedWorks(maxWorks, maxBytes int) *encodedWorks {
	return &encodedWorks{maxWorks: maxWorks, maxBytes: maxBytes, bytes: make(map[*agentv1.WorkUpsert][]byte)}
}

// get returns the encoding of the HubMessage carrying up, made once while
// it is held.
func (w *encodedWorks) get(up *agentv1.WorkUpsert) ([]byte, error) {
	w.mu.Lock()
	b, ok := w.bytes[up]
	w.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := proto.Marshal(&agentv1.HubMessage{Message: &agentv1.HubMessage_WorkUpsert{WorkUpsert: up}})
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if held, ok := w.bytes[up]; ok { // another stream encoded it meanwhile
		return held, nil
	}
	if len(b) > w.maxBytes {
		return b, nil
	}
	for len(w.order) > 0 && (len(w.order) >= w.maxWorks || w.size+len(b) > w.maxBytes) {
		w.dropOldest()
	}
	w.bytes[up] = b
	w.order = append(w.order, up)
	w.size += len(b)
	return b, nil
}

// dropOldest forgets the oldest encoding; w.mu must be held.
func (w *encodedWorks) dropOldest() {
	old := w.order[0]
	w.order[0] = nil
	w.order = w.order[1:]
	w.size -= len(w.bytes[old])
	delete(w.bytes, old)
}
