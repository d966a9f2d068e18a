package main

import (
	"flag"
	"fmt"
	"net/netip"

	"github.com/tetherproj/tether/agent"
)

// interpreterFlags registers the flags that bound what the hub's
// interpreter customizations cost this member: the Lua calls' memory
// and concurrency, and which interpreter webhooks the agent calls.
func interpreterFlags(fs *flag.FlagSet, cfg *agent.Config) {
	fs.Float64Var(&cfg.LuaMemoryFraction, "lua-memory-fraction", agent.DefaultLuaMemoryFraction,
		"share of the agent's memory limit (the lower of --memory-limit or $GOMEMLIMIT and the container's cgroup limit) one Lua call "+
			"of the hub's customizations may allocate, at most 256 MiB (also without a limit); a call past it fails and the agent goes on")
	fs.IntVar(&cfg.LuaConcurrency, "lua-concurrency", agent.DefaultLuaConcurrency,
		"Lua calls of the hub's customizations running at once; a call that finds no free slot before its deadline (1 s) fails")
	fs.BoolVar(&cfg.Webhooks.Refuse, "refuse-interpreter-webhooks", false,
		"never call the hub's interpreter webhooks: each is named refused in the customizations' ack, and the operations its rules "+
			"select fail, saying so in the works' status")
	fs.Func("interpreter-webhook-hosts", "comma-separated hosts the hub's interpreter webhooks may be called at: names, addresses "+
		"or *.suffix (a service is NAME.NAMESPACE.svc); a webhook configuration with a webhook elsewhere is refused as with "+
		"--refuse-interpreter-webhooks; empty: any host (repeatable)", func(v string) error {
		cfg.Webhooks.Hosts = append(cfg.Webhooks.Hosts, splitList(v)...)
		return nil
	})
	fs.Func("webhook-allow-cidrs", "comma-separated CIDRs interpreter webhooks may be called at although the default address "+
		"policy denies them (loopback, link-local, cloud metadata), e.g. 127.0.0.0/8 for a webhook on the node's host (repeatable)",
		func(v string) error {
			for _, item := range splitList(v) {
				p, err := netip.ParsePrefix(item)
				if err != nil {
					return fmt.Errorf("CIDR %q: %w", item, err)
				}
				cfg.WebhookAllowCIDRs = append(cfg.WebhookAllowCIDRs, p.Masked())
			}
			return nil
		})
}
