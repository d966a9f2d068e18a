package kit

import "time"

// Poll intervals (for proc.Poll) while waiting for the kit's own start-up
// conditions. They are short because every one of them sits on the start-up
// critical path and each check is a single cheap request to a local process.
const (
	pollFast = 50 * time.Millisecond  // etcd /health, API server /readyz
	pollAPI  = 100 * time.Millisecond // objects read through the API
)
