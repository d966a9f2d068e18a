package layout

import (
	"strings"
	"testing"
)

// loops are the hub's pipeline controllers: each lists and watches the
// store, runs goroutines and writes, calling one stage of hub/pipeline;
// hub/liveness keeps the lease table every replica runs (its pure part,
// Lease and the heartbeat's conversion into a status, is
// hub/pipeline/lease).
var loops = []string{"/hub/detector", "/hub/scheduler", "/hub/render", "/hub/aggregate", "/hub/liveness"}

// TestClientAPIImportsNoLoop: the client API runs the pipeline's stages
// (hub/pipeline) and never a loop package, directly or through another
// package, so that it sits beside the controllers, not above them; the
// pipeline's stages import no loop either.
func TestClientAPIImportsNoLoop(t *testing.T) {
	checked := 0
	for _, p := range packages(t) {
		if !pureOfLoops(p.ImportPath) {
			continue
		}
		checked++
		for _, d := range p.Deps {
			for _, loop := range loops {
				if d == module+loop || strings.HasPrefix(d, module+loop+"/") && !isStage(d) {
					t.Errorf("%s imports %s, a loop package; call its stage in hub/pipeline instead", p.ImportPath, d)
				}
			}
		}
	}
	if checked < 2 {
		t.Fatalf("checked %d packages; want hub/clientapi and hub/pipeline at least", checked)
	}
}

// pureOfLoops reports whether package path may import no loop package.
func pureOfLoops(path string) bool {
	return path == module+"/hub/clientapi" || path == module+"/hub/clientapi/offline" ||
		path == module+"/hub/pipeline" || strings.HasPrefix(path, module+"/hub/pipeline/")
}

// isStage reports whether path, under a loop package, is one of the pure
// parts the pipeline uses (hub/aggregate/fold, the status stage).
func isStage(path string) bool { return path == module+"/hub/aggregate/fold" }
