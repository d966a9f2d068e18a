// Package memberproxy tests the hub's member proxy (hub/memberproxy,
// agent/memberproxy) with real parts: member clusters of the kit, a
// tether-hub process serving --proxy-listen, tether-agent processes, and
// stock kubectl (test/kubectlbin, kit.Kubectl) with the kubeconfig that
// client.Config.Kubeconfig writes, as `tetherctl kubeconfig` does.
//
// Each test starts such a fleet, then runs kubectl (or an HTTPS client
// with a hub user's certificate) through the hub and, for comparison,
// directly against the member.
package memberproxy
