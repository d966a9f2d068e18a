package grpcurl

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// readmeBlock matches a marker and the sh code block after it.
var readmeBlock = regexp.MustCompile("(?s)<!-- grpcurl:([a-z]+) -->\\s*```sh\\n(.*?)```")

// readmeBlocks returns the README's grpcurl commands by marker name,
// failing the test unless each of want is there exactly once.
func readmeBlocks(t *testing.T, want ...string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	for _, m := range readmeBlock.FindAllStringSubmatch(string(data), -1) {
		if _, dup := blocks[m[1]]; dup {
			t.Fatalf("README.md: two blocks marked <!-- grpcurl:%s -->", m[1])
		}
		blocks[m[1]] = m[2]
	}
	for _, name := range want {
		if blocks[name] == "" {
			t.Fatalf("README.md: no sh block after <!-- grpcurl:%s --> (found %d marked blocks)", name, len(blocks))
		}
	}
	return blocks
}
