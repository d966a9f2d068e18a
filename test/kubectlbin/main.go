// Command kubectl is the stock kubectl (k8s.io/kubectl, at the version the
// kit's Kubernetes is pinned to), for the tests that prove unmodified
// kubectl works through the hub's member proxy. Its main is the one of
// k8s.io/kubernetes/cmd/kubectl; this module exists so that the build needs
// no replace directives and stays out of the main go.mod.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
