package agent

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
)

// Defaults of what the hub's Lua customizations may cost the agent.
const (
	// DefaultLuaMemoryFraction is the share of the agent's memory limit
	// one Lua call may allocate: 64 MiB under the chart's 512Mi.
	DefaultLuaMemoryFraction = 0.125
	// DefaultLuaConcurrency is how many Lua calls run at once: two of the
	// fraction above stay well inside the limit.
	DefaultLuaConcurrency = 2
)

// cgroupRoot is where the container's cgroup files are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// noCgroupLimit is what cgroup v1 reports as its limit when there is
// none (the largest page-aligned int64); anything from it up is no limit.
const noCgroupLimit = math.MaxInt64 &^ (1<<12 - 1)

// interpreterConfig is the member side's interpreter configuration:
// every Lua call of a customization bounded by the agent's own memory
// limit and concurrency (--lua-memory-fraction, --lua-concurrency), and
// webhooks called under the agent's address policy (--webhook-allow-cidrs).
func interpreterConfig(cfg Config, memoryLimit int64) interpreter.Config {
	limits := luavm.DefaultLimits()
	limits.MaxMemoryBytes = callMemory(cfg.luaMemoryFraction(), memoryLimit)
	concurrency := cfg.LuaConcurrency
	if concurrency == 0 {
		concurrency = DefaultLuaConcurrency
	}
	return interpreter.Config{Limits: limits, LuaConcurrency: concurrency, WebhookAllowCIDRs: cfg.WebhookAllowCIDRs}
}

// luaMemoryFraction is LuaMemoryFraction, or its default when 0.
func (c Config) luaMemoryFraction() float64 {
	if c.LuaMemoryFraction == 0 {
		return DefaultLuaMemoryFraction
	}
	return c.LuaMemoryFraction
}

// callMemory is what one Lua call may allocate, in bytes: fraction of
// limit, and never more than luavm.DefaultMaxMemoryBytes (the hub's own
// bound), which is also the bound when no limit is known (limit 0).
func callMemory(fraction float64, limit int64) int64 {
	if limit <= 0 {
		return luavm.DefaultMaxMemoryBytes
	}
	return max(1, min(int64(fraction*float64(limit)), luavm.DefaultMaxMemoryBytes))
}

// memoryLimit is the agent's memory limit in bytes: the lower of Go's
// soft limit (--memory-limit, $GOMEMLIMIT) and the container's cgroup
// limit; 0 when neither is set.
func memoryLimit() int64 {
	limit := cgroupMemoryLimit(cgroupRoot)
	if soft := debug.SetMemoryLimit(-1); soft > 0 && soft < math.MaxInt64 && (limit == 0 || soft < limit) {
		limit = soft
	}
	return limit
}

// cgroupMemoryLimit reads the memory limit of the cgroup mounted at root,
// as a container sees its own: cgroup v2's memory.max, else v1's
// memory/memory.limit_in_bytes; 0 when there is none or it cannot be read.
func cgroupMemoryLimit(root string) int64 {
	for _, f := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || n <= 0 || n >= noCgroupLimit {
			return 0 // "max", or v1's no limit
		}
		return n
	}
	return 0
}
