package hub

import "context"

// SetStoreProbe makes h's store watch call probe instead of the store's
// Reachable, for tests of what the hub does when its store does not answer.
func SetStoreProbe(h *Hub, probe func(ctx context.Context) error) { h.storeProbe = probe }
