// Command kitbin is every binary the member-cluster kit (test/kit) runs, in
// one executable, as k3s does: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok. One binary means one link instead of five and one
// compile of the Kubernetes libraries they share; kwok is built in this
// module against the same libraries as the Kubernetes components.
//
// It runs the component its name says, so that `make kit-bins` installs it
// once and names it five times with symlinks:
//
//	kube-apiserver --secure-port=6443 ...   (argv[0] is a symlink to kitbin)
//	kitbin kube-apiserver --secure-port=6443 ...
//
// The component then sees its usual command line (os.Args[0] its own name).
//
// This is its own module so that k8s.io/kubernetes, which needs a replace for
// each of its staging modules, stays out of the main go.mod. Every module
// that both builds compile (client-go, apimachinery, etcd, grpc, protobuf,
// ...) is required at the same version here and in the main go.mod, so that
// Go's build cache compiles it once for both: test/layout's
// TestKitbinSharesModules fails when the two drift apart.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// components maps each binary name to its main; each never returns.
var components = map[string]func(){
	"etcd":                    etcdMain,
	"kube-apiserver":          apiServerMain,
	"kube-controller-manager": controllerManagerMain,
	"kube-scheduler":          schedulerMain,
	"kwok":                    kwokMain,
}

func main() {
	if run, ok := components[filepath.Base(os.Args[0])]; ok {
		run()
		return
	}
	if len(os.Args) > 1 {
		if run, ok := components[os.Args[1]]; ok {
			os.Args = os.Args[1:]
			run()
			return
		}
	}
	fmt.Fprintf(os.Stderr, "usage: kitbin COMPONENT [ARGS...], or run it through a link named COMPONENT\ncomponents: %s\n", strings.Join(names(), ", "))
	os.Exit(2)
}

func names() []string {
	var ns []string
	for n := range components {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}
