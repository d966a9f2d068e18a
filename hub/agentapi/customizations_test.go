package agentapi_test

import (
	"sync"
	"testing"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
)

// customizations is a set source for tests: set replaces the set and
// closes the previous one's channel, as hub/customizations does.
type customizations struct {
	mu      sync.Mutex
	cur     *agentv1.Customizations
	changed chan struct{}
}

func newCustomizations() *customizations { return &customizations{changed: make(chan struct{})} }

func (c *customizations) Customizations() (*agentv1.Customizations, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur, c.changed
}

func (c *customizations) set(version string, rics ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &agentv1.Customizations{Version: version}
	for _, r := range rics {
		s.ResourceInterpreterCustomizations = append(s.ResourceInterpreterCustomizations, []byte(r))
	}
	c.cur = s
	close(c.changed)
	c.changed = make(chan struct{})
}

// TestCustomizationsReachTheAgents: after Welcome and before any work, an
// agent gets the hub's set when it holds another version, not when it
// holds this one, nothing before the hub has loaded its set, and every
// newer set as it comes, the empty one included; an agent that does not
// support them gets none.
func TestCustomizationsReachTheAgents(t *testing.T) {
	src := newCustomizations()
	h := startHub(t, agentapi.Config{Customizations: src})
	h.works.Set([]string{"cluster-a"}, work("w1", "v1"))

	early := h.connect(t, "cluster-a", supporting(held(""), ""))
	early.expect("welcome "+hubIdentity, "upsert w1@v1", "syncdone 1")
	src.set("c1", `{"kind":"ResourceInterpreterCustomization"}`)
	early.expect("customizations c1 (1, 0)")
	early.cancel()

	h.connect(t, "cluster-b", supporting(held(hubIdentity), "c0")).expect("welcome "+hubIdentity, "customizations c1 (1, 0)", "syncdone 0")
	h.works.Set([]string{"cluster-old"}, work("w2", "v1"))
	h.connect(t, "cluster-old", held("")).expect("welcome "+hubIdentity, "upsert w2@v1", "syncdone 1") // no customizations

	a := h.connect(t, "cluster-c", supporting(held(hubIdentity), "c1"))
	a.expect("welcome "+hubIdentity, "syncdone 0")
	src.set("" /* the empty set */)
	a.expect("customizations  (0, 0)")
	src.set("c2", "{}", "{}")
	a.expect("customizations c2 (2, 0)")
	h.works.Set([]string{"cluster-c"}, work("w3", "v1"))
	a.expect("upsert w3@v1")
}

// supporting is hello from an agent that supports customizations and
// holds version.
func supporting(hello *agentv1.Hello, version string) *agentv1.Hello {
	hello.CustomizationsSupported, hello.CustomizationsVersion = true, version
	return hello
}
