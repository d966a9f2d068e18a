package kit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// BinEnv names the environment variable that points the kit at a directory
// holding its binaries, instead of <repo>/test/.cache/bin.
const BinEnv = "TETHER_KIT_BIN"

// modulePath identifies the repository root while walking up from the working
// directory: the directory whose go.mod declares this module.
const modulePath = "github.com/tetherproj/tether"

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
		root, err := repoRoot()
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

// repoRoot walks up from the working directory to the directory whose go.mod
// declares the tether module.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s above the working directory", modulePath)
		}
		dir = parent
	}
}

// isModuleRoot reports whether the go.mod at path declares the tether module
// (test/kitbin has a go.mod of its own, which must not stop the walk).
func isModuleRoot(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == modulePath
		}
	}
	return false
}
