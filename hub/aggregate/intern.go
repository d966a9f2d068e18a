package aggregate

import "sync"

// maxInterned bounds the strings an interner holds: past it, it starts
// over (what was shared stays shared; later copies share anew).
const maxInterned = 1 << 17

// interner hands out one copy of the strings that every cluster's
// updates repeat (work and binding keys, versions, digests): a work
// Duplicated to a thousand clusters is held a thousand times, its key and
// version once.
type interner struct {
	mu sync.Mutex
	m  map[string]string
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
