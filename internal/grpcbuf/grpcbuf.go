// Package grpcbuf is the buffer pool of the hub's gRPC traffic (its
// agent and client port, its etcd client, its embedded etcd's server):
// gRPC's own tiered pool, with tiers of 256 B, 1 KiB, 4 KiB and every
// power of two from 8 KiB to 1 MiB. gRPC's default pool has none between
// 32 KiB and 1 MiB, so every message in that range (a SyncDone or
// StatusRequest naming 1,000 works, a binding placed on 1,000 clusters)
// would hold 1 MiB until it is written or decoded, and a hub resyncing
// its agents after a restart would hold hundreds of them at once.
package grpcbuf

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
)

// pool is shared by every server and client given its options.
var pool = mustPool(8, 10, 12, 13, 14, 15, 16, 17, 18, 19, 20)

// Pool is the pool itself.
func Pool() mem.BufferPool { return pool }

// ServerOption makes a gRPC server use the pool.
func ServerOption() grpc.ServerOption { return experimental.BufferPool(pool) }

// DialOption makes a gRPC client use the pool.
func DialOption() grpc.DialOption { return experimental.WithBufferPool(pool) }

func mustPool(exponents ...uint8) mem.BufferPool {
	p, err := mem.NewBinaryTieredBufferPool(exponents...)
	if err != nil {
		panic(fmt.Sprintf("grpcbuf: %v", err))
	}
	return p
}
