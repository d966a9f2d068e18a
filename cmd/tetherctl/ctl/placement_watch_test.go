package ctl_test

import (
	"strings"
	"testing"
	"time"
)

// TestPlacementWatch: placement KIND -w streams the placements of every
// selected template (the current ones, then each change), placement
// KIND/NAME -w the one template's.
func TestPlacementWatch(t *testing.T) {
	h := webHub(t) // web placed on m1 with 3 replicas
	all := runBackground(t, h.viewer, "", "placement", "deployments", "-w")
	api := runBackground(t, h.viewer, "", "placement", "deployments", "-w", "-l", "app=api")
	one := runBackground(t, h.viewer, "", "placement", "deployment/web", "-w")
	for _, run := range []*background{all, one} {
		eventually(t, "the current web placement", func() bool {
			out := run.out.String()
			return hasLine(out, "EVENT NAMESPACE NAME SCHEDULED CLUSTERS REVISION") && hasLine(out, "ADDED default web true m1:3 ")
		})
	}

	h.put(t, webKey, strings.Replace(webBinding, `"clusters": [{"name": "m1", "replicas": 3}]`, `"clusters": [{"name": "m2", "replicas": 3}]`, 1))
	for _, run := range []*background{all, one} {
		eventually(t, "web moved to m2", func() bool { return hasLine(run.out.String(), "MODIFIED default web true m2:3 ") })
	}
	mustRunIn(t, h.admin, strings.ReplaceAll(webManifests, "web", "api"), "apply", "-f", "-")
	for _, run := range []*background{all, api} {
		eventually(t, "the api template", func() bool { return hasLine(run.out.String(), "ADDED default api false <none> ") })
	}
	if out := api.out.String(); strings.Contains(out, " web ") {
		t.Errorf("placement deployments -w -l app=api =\n%s\nwant only api", out)
	}
	if strings.Contains(one.out.String(), " api ") {
		t.Errorf("placement deployment/web -w =\n%s\nwant only web", one.out.String())
	}
	all.cancel()
	if code := all.exit(t, 10*time.Second); code != 0 {
		t.Errorf("placement -w after an interrupt = %d, stderr %q; want 0", code, all.err.String())
	}
	if code, _, errOut := runWith(t, h.viewer, "", "placement", "deployments", "-w", "-o", "json"); code != 1 || !strings.Contains(errOut, "prints a table only") {
		t.Errorf("placement -w -o json = %d, %q; want a refusal", code, errOut)
	}
}
