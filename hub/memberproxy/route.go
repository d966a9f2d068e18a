package memberproxy

import (
	"strings"

	"github.com/tetherproj/tether/internal/memberreq"
)

// PathPrefix is where the hub serves each member's API (see memberreq).
const PathPrefix = memberreq.PathPrefix

// route splits a proxy URL path into the cluster's name and the member's
// path ("/" at least); ok is false for any other path.
func route(path string) (cluster, memberPath string, ok bool) {
	rest, found := strings.CutPrefix(path, PathPrefix)
	if !found {
		return "", "", false
	}
	cluster, rest, found = strings.Cut(rest, "/")
	if cluster == "" {
		return "", "", false
	}
	switch {
	case found && rest == "proxy":
		return cluster, "/", true
	case found && strings.HasPrefix(rest, "proxy/"):
		return cluster, rest[len("proxy"):], true
	}
	return "", "", false
}
