// Package placementtest helps tests compare what hub/placement decides with
// the placement conformance cases, which record Karmada's own messages.
// It imports the standard library only.
package placementtest

import "strings"

// KarmadaMessage removes from a FitError's message the " (cluster names)"
// Tether adds after each reason, leaving Karmada's text ("0/3 clusters are
// available: 1 cluster(s) had untolerated taint {k:NoSchedule}.").
// Parentheses nested in the names are skipped with them.
func KarmadaMessage(msg string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(msg); i++ {
		switch {
		case msg[i] == ' ' && i+1 < len(msg) && msg[i+1] == '(' && depth == 0:
			depth = 1
			i++
		case depth > 0 && msg[i] == '(':
			depth++
		case depth > 0 && msg[i] == ')':
			depth--
		case depth == 0:
			b.WriteByte(msg[i])
		}
	}
	return b.String()
}
