//go:build renderfault

package render

import "os"

// init makes every render of the key PanicKeyEnv names panic. Only a hub
// built with -tags renderfault has this file: the fault suite's.
func init() {
	k := os.Getenv(PanicKeyEnv)
	if k == "" {
		return
	}
	renderFault = func(key string) {
		if key == k {
			panic("renderfault: the render of " + key + " panics (" + PanicKeyEnv + ")")
		}
	}
}
