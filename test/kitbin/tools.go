//go:build tools

// Package kitbin pins the Kubernetes and etcd binaries that the member-cluster
// kit (test/kit) runs. It is its own module so that k8s.io/kubernetes, which
// needs a replace for each of its staging modules, stays out of the main
// go.mod. Nothing imports it; `make kit-bins` builds its commands.
package kitbin

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
