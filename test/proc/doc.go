// Package proc owns the child processes of the test harnesses (test/kit's
// clusters, test/fleet's hub and agents): it starts them so that they die
// with the test binary, stops them with their whole process group, quotes
// their logs when they end early, polls for them to come up, and finds the
// repository root their binaries are built under.
//
// A harness makes one Spawner, starts each child with Start, polls it with
// Poll until it is ready (returning Permanent(p.ExitError()) once p.Exited),
// and at the end calls Stop on every Process and then Spawner.Close. A test
// that owns a process hands it to StopAtEnd, which stops it when the test
// ends and quotes its log if the test failed.
//
// It depends on the standard library alone.
package proc
