package memberproxy

import "fmt"

// Mode is what the member's owner lets the hub's users do through the
// proxy (tether-agent --member-proxy).
type Mode string

const (
	// Off: the agent does not listen for tunnels; the hub answers that
	// the cluster offers no proxy.
	Off Mode = "off"
	// ReadOnly: only reads (get, list, watch, logs) pass; exec, attach,
	// port-forward and writes are refused by the agent with 403.
	ReadOnly Mode = "read-only"
	// Full: every request goes to the member, whose RBAC decides.
	Full Mode = "full"
)

// ParseMode checks a --member-proxy value; empty is Full.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Off, ReadOnly, Full:
		return m, nil
	case "":
		return Full, nil
	}
	return "", fmt.Errorf("--member-proxy %q: want off, read-only or full", s)
}
