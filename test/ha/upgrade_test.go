package ha_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tetherproj/tether/test/proc"
)

// previousRelease is the commit of the last release: the upgrade scenario
// starts its replicas and agents from binaries built at it. Move it on
// with each release.
const previousRelease = "57a6d99"

// previousBinaries returns the directory holding tether-hub and
// tether-agent built at previousRelease, building them into
// test/.cache/ha-previous-<commit>/bin from `git archive` of that commit
// the first time (a plain export: nothing is added to the repository's
// worktrees). A clone without that commit fails the test saying so.
func previousBinaries(t *testing.T) string {
	t.Helper()
	root, err := proc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(root, "test", ".cache", "ha-previous-"+previousRelease)
	bin := filepath.Join(cache, "bin")
	if haveBinaries(bin) {
		return bin
	}
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--verify", "--quiet", previousRelease+"^{commit}").CombinedOutput(); err != nil {
		t.Fatalf("the previous release %s is not in this clone's history (git rev-parse: %v %s): the upgrade scenario builds it from git; "+
			"clone the whole repository (git fetch --unshallow)", previousRelease, err, out)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(cache, "build-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	src, out := filepath.Join(tmp, "src"), filepath.Join(tmp, "bin")
	if err := exportCommit(root, previousRelease, src); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-trimpath", "-o", out+"/", "./cmd/tether-hub", "./cmd/tether-agent")
	build.Dir = src
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the previous release %s: %v\n%s", previousRelease, err, b)
	}
	// Another test process may have built them meanwhile: either copy will do.
	if err := os.Rename(out, bin); err != nil && !haveBinaries(bin) {
		t.Fatalf("keep the previous release's binaries: %v", err)
	}
	return bin
}

func haveBinaries(dir string) bool {
	for _, b := range []string{"tether-hub", "tether-agent"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return false
		}
	}
	return true
}

// exportCommit writes the tree of commit into dir (git archive | tar -x).
func exportCommit(root, commit, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	archive := exec.Command("git", "-C", root, "archive", "--format=tar", commit)
	var stderr bytes.Buffer
	archive.Stderr = &stderr
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar := exec.Command("tar", "-x", "-C", dir)
	untar.Stdin = pipe
	if err := archive.Start(); err != nil {
		return fmt.Errorf("git archive %s: %w", commit, err)
	}
	terr := untar.Run()
	if err := archive.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %w: %s", commit, err, stderr.Bytes())
	}
	if terr != nil {
		return fmt.Errorf("untar %s: %w", commit, terr)
	}
	return nil
}
