package render

import "context"

// PanicKeyEnv names the environment variable that, in a hub built with
// -tags renderfault (fault_renderfault.go), names a work key whose every
// render panics: a process-level fault test makes one key's render panic
// in a real hub binary with it. Other builds ignore it.
const PanicKeyEnv = "TETHER_RENDER_PANIC_KEY"

// renderFault runs before each render of a work key (runJobs). It does
// nothing unless the build's renderfault hook replaced it.
var renderFault = func(key string) {}

// ApplyPanicKeyEnv names the environment variable that, in a hub built
// with -tags renderfault, makes the renderer panic while it applies every
// stored object whose key ends with its value (a template, a binding):
// the fault suite's hub reads an object it cannot apply. Other builds
// ignore it.
const ApplyPanicKeyEnv = "TETHER_APPLY_PANIC_KEY"

// applyFault runs before the renderer applies a stored object (apply). It
// does nothing unless the build's renderfault hook replaced it.
var applyFault = func(storeKey string) {}

// HoldFileEnv names the environment variable that, in a hub built with
// -tags renderfault, names a file: while it exists, the renderer applies
// no store change it is told of (its view lags the store, as a replica's
// does when it finds etcd again). The HA suite's lagging-replica scenario
// holds one replica back with it. Other builds ignore it.
const HoldFileEnv = "TETHER_RENDER_HOLD_FILE"

// holdFault runs before the renderer applies the store changes it was
// told of (session). It returns at once unless the build's renderfault
// hook replaced it.
var holdFault = func(ctx context.Context) {}
