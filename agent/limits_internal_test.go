package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tetherproj/tether/agent/customizations"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
)

const mib = 1 << 20

// TestCallMemory: a Lua call may allocate its fraction of the agent's
// memory limit, never more than luavm's default, which is also the bound
// without a limit.
func TestCallMemory(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fraction float64
		limit    int64
		want     int64
	}{
		{"chart limit", DefaultLuaMemoryFraction, 512 * mib, 64 * mib},
		{"small limit", 0.25, 64 * mib, 16 * mib},
		{"past the default", 0.5, 4096 * mib, luavm.DefaultMaxMemoryBytes},
		{"no limit", DefaultLuaMemoryFraction, 0, luavm.DefaultMaxMemoryBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := callMemory(tc.fraction, tc.limit); got != tc.want {
				t.Errorf("callMemory(%g, %d) = %d; want %d", tc.fraction, tc.limit, got, tc.want)
			}
		})
	}
}

// TestCgroupMemoryLimit reads cgroup v2's memory.max and v1's
// memory.limit_in_bytes; "max" and v1's huge value are no limit.
func TestCgroupMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name, file, content string
		want                int64
	}{
		{"v2 limit", "memory.max", "536870912\n", 512 * mib},
		{"v2 no limit", "memory.max", "max\n", 0},
		{"v1 limit", "memory/memory.limit_in_bytes", "1073741824\n", 1024 * mib},
		{"v1 no limit", "memory/memory.limit_in_bytes", "9223372036854771712\n", 0},
		{"none", "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.file != "" {
				path := filepath.Join(root, tc.file)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := cgroupMemoryLimit(root); got != tc.want {
				t.Errorf("cgroupMemoryLimit(%s %q) = %d; want %d", tc.file, tc.content, got, tc.want)
			}
		})
	}
}

// TestLuaRunsUnderTheAgentsLimits: the member side's interpreter, under
// a 64 MiB memory limit with --lua-memory-fraction 0.125 and
// --lua-concurrency 3, stops a customization that allocates 32 MiB for
// an object named greedy (well inside luavm's default) with the memory
// budget's error, and the next call of another rule answers.
func TestLuaRunsUnderTheAgentsLimits(t *testing.T) {
	in, err := interpreter.New(interpreterConfig(Config{LuaMemoryFraction: 0.125, LuaConcurrency: 3}, 64*mib), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if got := in.VM().Limits().MaxMemoryBytes; got != 8*mib {
		t.Errorf("MaxMemoryBytes = %d; want %d (1/8 of 64 MiB)", got, 8*mib)
	}
	if got := in.VM().Concurrency(); got != 3 {
		t.Errorf("Concurrency() = %d; want 3", got)
	}
	ric := `{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterCustomization","metadata":{"name":"greedy"},
"spec":{"target":{"apiVersion":"apps/v1","kind":"Deployment"},"customizations":{
"statusReflection":{"luaScript":"function ReflectStatus(o) local s = 'x' if o.metadata.name == 'greedy' then for i = 1, 25 do s = s .. s end end return {size = #s} end"},
"healthInterpretation":{"luaScript":"function InterpretHealth(o) return false end"}}}}`
	l := customizations.New(in, customizations.WebhookPolicy{}, hclog.NewNullLogger())
	if refused, err := l.Load(context.Background(), &agentv1.Customizations{Version: "v1", ResourceInterpreterCustomizations: [][]byte{[]byte(ric)}}); err != nil || len(refused) > 0 {
		t.Fatalf("Load = %v, %v; want it loaded", refused, err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "greedy", "namespace": "default"}}}
	if _, err := in.ReflectStatus(context.Background(), obj); err == nil || !strings.Contains(err.Error(), "lua: memory budget of 8388608 bytes exceeded") {
		t.Errorf("ReflectStatus allocating 32 MiB = %v; want the memory budget's error", err)
	}
	if h, err := in.HealthWithError(context.Background(), obj); h != configv1alpha1.ResourceUnhealthy || err != nil {
		t.Errorf("health after the stopped call = %s, %v; want the user's Unhealthy", h, err)
	}
}
