package layout

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// TestKitbinSharesModules checks that every module whose packages both the
// main module's commands and the kit's binary (test/kitbin, its own module)
// compile is resolved to the same version in both, so that Go's build cache
// compiles it once: a cold `make demo` builds both (README, "The first run").
func TestKitbinSharesModules(t *testing.T) {
	ours := depModules(t, "../..", "./cmd/...")
	kit := depModules(t, "../kitbin", ".")
	var differ []string
	for path, v := range ours {
		if w, ok := kit[path]; ok && w != v {
			differ = append(differ, path+": "+v+" in go.mod, "+w+" in test/kitbin/go.mod")
		}
	}
	sort.Strings(differ)
	if len(differ) > 0 {
		t.Errorf("%d modules both builds compile differ in version (require the higher one in both go.mod files):\n%s",
			len(differ), strings.Join(differ, "\n"))
	}
	if len(kit) == 0 || len(ours) == 0 {
		t.Fatalf("go list found %d modules for the commands and %d for kitbin", len(ours), len(kit))
	}
}

// depModules returns the module path → version (after replacements) of every
// package the patterns need, listed in dir.
func depModules(t *testing.T, dir string, patterns ...string) map[string]string {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} {{.Version}}{{end}}{{end}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v", dir, err)
	}
	mods := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue // the standard library, or the module itself
		}
		mods[f[0]] = f[len(f)-1]
	}
	return mods
}
