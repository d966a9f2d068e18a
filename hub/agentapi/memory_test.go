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
	// maxGoroutinesPerStream bounds the goroutines of one idle stream,
	// both sides: on the hub, gRPC's three per connection (reader, writer,
	// keepalive) and the handler's two (Connect sending and following the
	// works and settings, receive); the rest are the agent's side's (its
	// connection and stream). Each costs a stack of a few KB: for 10,000
	// agents, one goroutine per stream more is about 60 MB of the hub's
	// memory.
	maxGoroutinesPerStream = 11
)

// TestStreamsHoldNoReadBuffer: an idle agent stream pins no read buffer of
// its own on the hub. TLS already buffers a record, and gRPC's read buffer
// pooling does not apply to TLS connections, so gRPC's default would pin
// 32 KiB per connected agent for ever. Nor does it run more goroutines
// than it needs.
func TestStreamsHoldNoReadBuffer(t *testing.T) {
	// As the hub runs it: customizations and resource models followed.
	h := startHub(t, agentapi.Config{Customizations: newCustomizations(), ResourceModels: noModels{}})
	before := heapInUse()
	goroutinesBefore := runtime.NumGoroutine()
	for i := range memStreams {
		a := h.connect(t, fmt.Sprintf("mem-%03d", i), &agentv1.Hello{},
			grpc.WithReadBufferSize(0), grpc.WithWriteBufferSize(0)) // the agent's side as lean as it gets
		a.expect("welcome "+hubIdentity, "syncdone 0")
	}
	per := (heapInUse() - before) / memStreams
	perG := (runtime.NumGoroutine() - goroutinesBefore) / memStreams
	t.Logf("%d idle streams: %d goroutines each, both sides", memStreams, perG)
	if perG > maxGoroutinesPerStream {
		t.Errorf("an idle agent stream runs %d goroutines, both sides; want at most %d", perG, maxGoroutinesPerStream)
	}

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

// noModels is a resource models source without models that never change.
type noModels struct{}

func (noModels) ResourceModels(string) ([]*agentv1.ResourceModel, <-chan struct{}) {
	return nil, make(chan struct{})
}
