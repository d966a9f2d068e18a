package agentapi_test

import (
	"fmt"
	"runtime"
	"testing"

	"google.golang.org/grpc"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
)

// Sizes of TestStreamsHoldNoReadBuffer.
const (
	// memStreams is how many agent streams the test opens.
	memStreams = 200
	// maxBytesPerStream bounds the heap one idle stream costs both sides
	// together here (the agent's side made as lean as it can be), bytes:
	// TLS, HTTP/2 and gRPC state, about 64 KiB; a 32 KiB read buffer
	// pinned on the hub's side (10,000 agents: 320 MB) goes over it.
	maxBytesPerStream = 80 << 10
)

// TestStreamsHoldNoReadBuffer: an idle agent stream pins no read buffer of
// its own on the hub. TLS already buffers a record, and gRPC's read buffer
// pooling does not apply to TLS connections, so gRPC's default would pin
// 32 KiB per connected agent for ever.
func TestStreamsHoldNoReadBuffer(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	before := heapInUse()
	for i := range memStreams {
		a := h.connect(t, fmt.Sprintf("mem-%03d", i), &agentv1.Hello{},
			grpc.WithReadBufferSize(0), grpc.WithWriteBufferSize(0)) // the agent's side as lean as it gets
		a.expect("welcome "+hubIdentity, "syncdone 0")
	}
	per := (heapInUse() - before) / memStreams

	t.Logf("%d idle streams: %d bytes each, both sides", memStreams, per)
	if per > maxBytesPerStream {
		t.Errorf("an idle agent stream costs %d bytes of heap; want at most %d", per, maxBytesPerStream)
	}
}

// heapInUse is the live heap after a full collection, bytes.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
