package main

// pprofMemProfileRate is the heap profile's sampling interval while
// --pprof-addr is set, in bytes allocated per sample: Go's default, 512 KiB,
// leaves an agent's heap of some 10 MB with a few dozen samples.
const pprofMemProfileRate = 16 << 10
