package ctl_test

import (
	"strings"
	"testing"
	"time"
)

// hasLine reports whether out has a line that, spaces collapsed, starts
// with prefix.
func hasLine(out, prefix string) bool {
	for _, l := range strings.Split(spaces.ReplaceAllString(out, " "), "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func TestGetWatch(t *testing.T) {
	h := webHub(t) // web: m1 2 of 3 ready
	all := runBackground(t, h.viewer, "", "get", "deployments", "--watch")
	one := runBackground(t, h.viewer, "", "get", "deployment", "web", "-w")
	for _, run := range []*background{all, one} {
		eventually(t, "the listed web row", func() bool {
			out := run.out.String()
			return hasLine(out, "EVENT NAME READY AGE") && hasLine(out, "ADDED web 2/3 ")
		})
	}

	// A change during the watch: a new Deployment.
	mustRunIn(t, h.admin, strings.ReplaceAll(webManifests, "web", "api"), "apply", "-f", "-")
	eventually(t, "the api row", func() bool { return hasLine(all.out.String(), "ADDED api 0/3 ") })

	// A status change reaches the row through the binding.
	h.put(t, webKey, readyWebBinding)
	for _, run := range []*background{all, one} {
		eventually(t, "web at 3/3", func() bool { return hasLine(run.out.String(), "MODIFIED web 3/3 ") })
	}

	mustRun(t, h.admin, "delete", "deployment", "api")
	eventually(t, "the api deletion", func() bool { return hasLine(all.out.String(), "DELETED api ") })

	if strings.Contains(one.out.String(), "api") {
		t.Errorf("get deployment web -w =\n%s\nwant only web", one.out.String())
	}
	all.cancel()
	if code := all.exit(t, 10*time.Second); code != 0 {
		t.Errorf("get -w after an interrupt = %d, stderr %q; want 0", code, all.err.String())
	}
}

func TestGetWatchJSONAndRefusals(t *testing.T) {
	h := webHub(t)
	run := runBackground(t, h.viewer, "", "get", "pp", "-w", "-o", "yaml")
	eventually(t, "the listed policy", func() bool {
		return strings.Contains(run.out.String(), "---\napiVersion: policy.tether.io/v1alpha1\nkind: PropagationPolicy\n")
	})
	mustRunIn(t, h.admin, strings.ReplaceAll(webManifests[strings.Index(webManifests, "apiVersion: policy"):], "name: web\nspec", "name: web2\nspec"), "apply", "-f", "-")
	eventually(t, "the new policy", func() bool { return strings.Contains(run.out.String(), "name: web2") })

	if code, _, errOut := runWith(t, h.viewer, "", "get", "clusters", "-w"); code != 1 || !strings.Contains(errOut, "run tetherctl clusters again") {
		t.Errorf("get clusters -w = %d, %q; want a refusal that says what to do", code, errOut)
	}
	if code, _, errOut := runWith(t, h.viewer, "", "get", "widgets", "-w"); code != 1 || !strings.Contains(errOut, "unknown kind") {
		t.Errorf("get widgets -w = %d, %q; want unknown kind", code, errOut)
	}
}

// mustRunIn runs tetherctl with stdin in and fails the test unless it exits 0.
func mustRunIn(t *testing.T, conf, in string, args ...string) string {
	t.Helper()
	code, out, errOut := runWith(t, conf, in, args...)
	if code != 0 {
		t.Fatalf("tetherctl %s = %d, stderr %q; want 0", strings.Join(args, " "), code, errOut)
	}
	return out
}
