package kit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tetherproj/tether/test/proc"
)

// BinEnv names the environment variable that points the kit at a directory
// holding its binaries, instead of <repo>/test/.cache/bin.
const BinEnv = "TETHER_KIT_BIN"

// Names of the binaries the kit runs; `make kit-bins` builds all of them.
const (
	binEtcd       = "etcd"
	binAPIServer  = "kube-apiserver"
	binController = "kube-controller-manager"
	binScheduler  = "kube-scheduler"
	binKwok       = "kwok"
)

var binaries = []string{binEtcd, binAPIServer, binController, binScheduler, binKwok}

// ErrMissingBinaries is wrapped by Start's error when the kit's binaries are
// not where it looks.
var ErrMissingBinaries = errors.New("kit: binaries missing")

// BinDir returns the directory the kit takes its binaries from: dir if not
// empty, else $TETHER_KIT_BIN, else test/.cache/bin under the repository root
// found by walking up from the working directory. It checks that every binary
// is there and says how to build them if not.
func BinDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv(BinEnv)
	}
	if dir == "" {
		root, err := proc.RepoRoot()
		if err != nil {
			return "", fmt.Errorf("%w: %v; set %s or run `make kit-bins` in the repository", ErrMissingBinaries, err, BinEnv)
		}
		dir = filepath.Join(root, "test", ".cache", "bin")
	}
	var missing []string
	for _, b := range binaries {
		fi, err := os.Stat(filepath.Join(dir, b))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%w: %s not found in %s: run `make kit-bins` in the repository root (or set %s)",
			ErrMissingBinaries, strings.Join(missing, ", "), dir, BinEnv)
	}
	return dir, nil
}
