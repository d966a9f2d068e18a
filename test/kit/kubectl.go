package kit

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tetherproj/tether/test/proc"
)

// KubectlEnv names the environment variable that points at a kubectl
// binary, instead of the kit's directory.
const KubectlEnv = "TETHER_KUBECTL"

// Kubectl returns the stock kubectl the tests run (test/kubectlbin, built
// by `make kubectl` at the kit's Kubernetes version): $TETHER_KUBECTL,
// else kubectl in $TETHER_KIT_BIN, else in <repo>/test/.cache/bin.
func Kubectl() (string, error) {
	if p := os.Getenv(KubectlEnv); p != "" {
		return p, nil
	}
	var dirs []string
	if d := os.Getenv(BinEnv); d != "" {
		dirs = append(dirs, d)
	}
	if root, err := proc.RepoRoot(); err == nil {
		dirs = append(dirs, filepath.Join(root, "test", ".cache", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "kubectl")
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: kubectl not found in %v: run `make kubectl` in the repository root (or set %s)", ErrMissingBinaries, dirs, KubectlEnv)
}
