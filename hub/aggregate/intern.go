package aggregate

import "sync"

// maxInterned bounds the strings an interner holds, and maxInternedBytes
// the bytes of the status JSON it holds: past either, it starts over
// (what was shared stays shared; later copies share anew). What it holds
// may be referenced by nothing else (a status since replaced), so both
// bound what it can keep alive.
const (
	maxInterned      = 1 << 17
	maxInternedBytes = 8 << 20
)

// interner hands out one copy of the strings that every cluster's
// updates repeat (work keys, versions, digests), and of the
// status JSON they often repeat too (a Duplicated Deployment's reflected
// status is its replica counts): a work Duplicated to a thousand clusters
// is held a thousand times, its key and version once.
type interner struct {
	mu sync.Mutex
	m  map[string]string
	b  map[string][]byte
	// bn is the size of what b holds.
	bn int
}

// get returns the copy of s held, holding s if there is none.
func (in *interner) get(s string) string {
	if s == "" {
		return ""
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.m[s]; ok {
		return c
	}
	if in.m == nil || len(in.m) >= maxInterned {
		in.m = make(map[string]string)
	}
	in.m[s] = s
	return s
}

// bytes returns the copy of b held, holding b if there is none. The copy
// is shared: never modify it.
func (in *interner) bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.b[string(b)]; ok {
		return c
	}
	if in.b == nil || len(in.b) >= maxInterned || in.bn+len(b) > maxInternedBytes {
		in.b, in.bn = make(map[string][]byte), 0
	}
	in.b[string(b)], in.bn = b, in.bn+len(b)
	return b
}
