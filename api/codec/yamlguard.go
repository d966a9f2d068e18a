package codec

import (
	"bytes"
	"fmt"

	yamlv3 "go.yaml.in/yaml/v3"
)

// checkAliases rejects a YAML document whose anchors and aliases would add
// more than maxAliasNodes nodes once expanded. The YAML decoder has its own
// guard against "billion laughs", but it lets a small document expand to
// millions of nodes first. Documents without an anchor cannot expand and are
// not parsed here.
func checkAliases(doc []byte) error {
	if bytes.IndexByte(doc, '&') < 0 || bytes.IndexByte(doc, '*') < 0 {
		return nil
	}
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(doc, &root); err != nil {
		// Not our concern: the real decoder reports the syntax error.
		return nil
	}
	g := aliasGuard{sizes: make(map[*yamlv3.Node]int)}
	if g.size(&root) < 0 {
		return fmt.Errorf("%w: YAML aliases expand to more than %d extra nodes", ErrTooLarge, maxAliasNodes)
	}
	return nil
}

// aliasGuard sizes a node tree with aliases expanded.
type aliasGuard struct {
	sizes map[*yamlv3.Node]int // expanded size of each anchored node seen
	extra int                  // nodes added by aliases so far
}

// size returns the number of nodes of n with aliases expanded, or -1 once
// aliases have added more than maxAliasNodes nodes (or form a cycle).
func (g *aliasGuard) size(n *yamlv3.Node) int {
	if n == nil {
		return 0
	}
	if n.Kind == yamlv3.AliasNode {
		s, ok := g.sizes[n.Alias]
		if !ok {
			return -1 // an alias to a node being sized: a cycle
		}
		g.extra += s
		if g.extra > maxAliasNodes {
			return -1
		}
		return s
	}
	total := 1
	for _, c := range n.Content {
		s := g.size(c)
		if s < 0 {
			return -1
		}
		total += s
	}
	if n.Anchor != "" {
		g.sizes[n] = total
	}
	return total
}
