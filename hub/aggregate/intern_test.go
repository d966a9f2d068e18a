package aggregate

import (
	"bytes"
	"testing"
)

// TestInternerSharesAndBoundsStatuses: equal status JSON is held once,
// and what the interner keeps alive stays within maxInternedBytes however
// many large statuses pass through it.
func TestInternerSharesAndBoundsStatuses(t *testing.T) {
	var in interner
	first := in.bytes([]byte(`{"replicas":3}`))
	if again := in.bytes([]byte(`{"replicas":3}`)); &again[0] != &first[0] {
		t.Fatalf("the same status interned twice gave two copies")
	}
	for i := range 1000 {
		in.bytes(bytes.Repeat([]byte{byte('a' + i%26), byte(i), byte(i >> 8)}, 64<<10/3))
		if in.bn > maxInternedBytes {
			t.Fatalf("after %d statuses of 64 KiB the interner holds %d bytes; the bound is %d", i+1, in.bn, maxInternedBytes)
		}
	}
}
