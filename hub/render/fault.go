package render

// PanicKeyEnv names the environment variable that, in a hub built with
// -tags renderfault (fault_renderfault.go), names a work key whose every
// render panics: a process-level fault test makes one key's render panic
// in a real hub binary with it. Other builds ignore it.
const PanicKeyEnv = "TETHER_RENDER_PANIC_KEY"

// renderFault runs before each render of a work key (runJobs). It does
// nothing unless the build's renderfault hook replaced it.
var renderFault = func(key string) {}
