package client

import (
	"fmt"
	"net"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tetherproj/tether/internal/memberreq"
)

// DefaultProxyPort is the port Kubeconfig assumes for the hub's member
// proxy (tether-hub --proxy-listen) when given no address.
const DefaultProxyPort = "7444"

// Kubeconfig returns a kubeconfig with which unmodified kubectl reaches
// each of clusters through the hub's member proxy at proxyAddr
// (host:port; empty: the host of c.Address, DefaultProxyPort), with c's
// CA and client certificate: one context per cluster, named after it,
// the first one current. The member's RBAC decides what the user, seen
// there as "tether:<user>", may do.
func (c Config) Kubeconfig(proxyAddr string, clusters ...string) ([]byte, error) {
	if len(clusters) == 0 {
		return nil, fmt.Errorf("kubeconfig: name at least one cluster")
	}
	if proxyAddr == "" {
		host, _, err := net.SplitHostPort(strings.Split(c.Address, ",")[0])
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: hub address %q: %w", c.Address, err)
		}
		proxyAddr = net.JoinHostPort(host, DefaultProxyPort)
	}
	user := "tether"
	if c.User != "" {
		user = "tether-" + c.User
	}
	kc := clientcmdapi.NewConfig()
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertPEM, ClientKeyData: c.KeyPEM}
	for _, name := range clusters {
		kc.Clusters[name] = &clientcmdapi.Cluster{Server: "https://" + proxyAddr + memberreq.ProxyPath(name),
			CertificateAuthorityData: c.CAPEM, TLSServerName: c.ServerName}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	}
	kc.CurrentContext = clusters[0]
	return clientcmd.Write(*kc)
}
