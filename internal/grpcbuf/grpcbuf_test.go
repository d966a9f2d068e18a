package grpcbuf

import "testing"

// TestPoolWastesLittle: a buffer the pool gives for a message between
// 32 KiB and 1 MiB is less than twice its length (gRPC's default pool
// gives 1 MiB for each).
func TestPoolWastesLittle(t *testing.T) {
	for _, n := range []int{100, 5 << 10, 33 << 10, 40 << 10, 150 << 10, 600 << 10, 1 << 20} {
		b := Pool().Get(n)
		if len(*b) != n || cap(*b) >= 2*n && cap(*b) > 256 {
			t.Errorf("Get(%d): length %d, capacity %d; want length %d, capacity under %d", n, len(*b), cap(*b), n, 2*n)
		}
		Pool().Put(b)
	}
}
