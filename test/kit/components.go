package kit

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// stages are kwok's Stage objects for the kit's nodes and pods.
//
//go:embed stages.yaml
var stages []byte

// Names of the files a cluster keeps in its directory.
const (
	fileServingCert  = "serving.crt"
	fileServingKey   = "serving.key"
	fileSAKey        = "service-account.key"
	fileSAPub        = "service-account.pub"
	fileTokens       = "tokens.csv"
	fileKubeconfig   = "kubeconfig"
	fileSchedulerCfg = "kube-scheduler.yaml"
	fileKwokCfg      = "kwok.yaml"
)

// adminUser is the identity of the admin token. system:masters bypasses RBAC.
const adminUser = "tether-kit-admin"

// kwokNodeAnnotation marks the nodes kwok manages (and only those).
const (
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	kwokNodeValue      = "fake"
)

// Address ranges inside every cluster; they never leave it.
const (
	serviceCIDR = "10.96.0.0/16"
	podCIDR     = "10.244.0.0/16" // kwok's pool for pod IPs (its default, a /24, is too small for scale tests)
)

// Client rate limits of the controller manager and scheduler (requests per
// second and burst). The defaults (20/30 and 50/100) throttle scale tests that
// create thousands of pods; a local API server takes far more.
const (
	componentQPS   = 200
	componentBurst = 400
)

// disabledControllers are the controller-manager controllers the kit turns
// off: cloud-provider ones, those that serve kubelets or volumes no kwok node
// has, certificate signing (no signer keys), DRA, storage-version migration and
// the HPA (no metrics API).
var disabledControllers = []string{
	"cloud-node-lifecycle-controller",
	"node-ipam-controller",
	"node-route-controller",
	"service-lb-controller",
	"persistentvolume-attach-detach-controller",
	"persistentvolume-expander-controller",
	"ephemeral-volume-controller",
	"volumeattributesclass-protection-controller",
	"certificatesigningrequest-approving-controller",
	"certificatesigningrequest-cleaner-controller",
	"certificatesigningrequest-signing-controller",
	"podcertificaterequest-cleaner-controller",
	"kube-apiserver-serving-clustertrustbundle-publisher-controller",
	"resourceclaim-controller",
	"device-taint-eviction-controller",
	"storage-version-migrator-controller",
	"storageversion-garbage-collector-controller",
	"legacy-serviceaccount-token-cleaner-controller",
	"horizontal-pod-autoscaler-controller",
}

// path returns the path of a file in the cluster's directory.
func (c *Cluster) path(name string) string { return filepath.Join(c.Dir, name) }

// writeConfig writes everything the cluster's processes read, except the
// kubeconfig, which needs the API server's port.
func (c *Cluster) writeConfig() error {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	serving, err := newServingCert(c.Name)
	if err != nil {
		return err
	}
	sa, err := newSigningKey()
	if err != nil {
		return err
	}
	if c.Token, err = newToken(); err != nil {
		return err
	}
	c.CAData = serving.cert
	schedCfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %d
  burst: %d
leaderElection:
  leaderElect: false
`, c.KubeconfigPath, componentQPS, componentBurst)
	files := []struct {
		name string
		data []byte
	}{
		{fileServingCert, serving.cert},
		{fileServingKey, serving.key},
		{fileSAKey, sa.key},
		{fileSAPub, sa.cert},
		{fileTokens, []byte(fmt.Sprintf("%s,%s,%s,system:masters\n", c.Token, adminUser, adminUser))},
		{fileSchedulerCfg, []byte(schedCfg)},
		{fileKwokCfg, stages},
		{fileKwokKubelet, c.kubeletConfig()},
	}
	for _, f := range files {
		if err := os.WriteFile(c.path(f.name), f.data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// writeKubeconfig writes the admin kubeconfig for the API server at c.Server.
// The context, cluster and user are all named after the cluster, so several
// kit kubeconfigs merge (KUBECONFIG=a:b:c) without clashes.
func (c *Cluster) writeKubeconfig() error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[c.Name] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: c.CAData}
	cfg.AuthInfos[c.Name] = &clientcmdapi.AuthInfo{Token: c.Token}
	cfg.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name}
	cfg.CurrentContext = c.Name
	return clientcmd.WriteToFile(*cfg, c.KubeconfigPath)
}

func (c *Cluster) apiServerArgs(port int) []string {
	return []string{
		"--bind-address=127.0.0.1",
		// Without it the API server derives an address from the default
		// route, and refuses to start where there is none (a bare network
		// namespace, as fault tests use).
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + c.Dir,
		"--tls-cert-file=" + c.path(fileServingCert),
		"--tls-private-key-file=" + c.path(fileServingKey),
		"--etcd-servers=" + c.env.EtcdURL,
		"--etcd-prefix=/clusters/" + c.Name,
		"--token-auth-file=" + c.path(fileTokens),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.path(fileSAPub),
		"--service-account-signing-key-file=" + c.path(fileSAKey),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--allow-privileged=true",
		// The "kubernetes" Service's endpoints would be 127.0.0.1, which
		// Endpoints validation refuses; no pod really runs to use them.
		"--endpoint-reconciler-type=none",
		// APF's priority levels and flow schemas cost start-up work and
		// memory and add nothing on a private test server.
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		// kwok's nodes (ClusterSpec.KubeletServer) have a host name no
		// resolver knows; their InternalIP is where kwok serves.
		"--kubelet-preferred-address-types=InternalIP",
	}
}

func (c *Cluster) controllerManagerArgs() []string {
	return []string{
		"--kubeconfig=" + c.KubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0", // no health/metrics server: nothing reads it, and it would need a port
		"--controllers=*,-" + strings.Join(disabledControllers, ",-"),
		"--service-account-private-key-file=" + c.path(fileSAKey),
		"--root-ca-file=" + c.path(fileServingCert),
		"--kube-api-qps=" + strconv.Itoa(componentQPS),
		"--kube-api-burst=" + strconv.Itoa(componentBurst),
	}
}

func (c *Cluster) schedulerArgs() []string {
	return []string{
		"--config=" + c.path(fileSchedulerCfg),
		"--secure-port=0",
	}
}

func (c *Cluster) kwokArgs() []string {
	return []string{
		"--kubeconfig=" + c.KubeconfigPath,
		"--config=" + c.path(fileKwokCfg),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=" + kwokNodeValue,
		"--cidr=" + podCIDR,
	}
}

// kwokEnv keeps kwok from reading ~/.kwok/kwok.yaml, which it loads in
// addition to --config when it exists.
func (c *Cluster) kwokEnv() []string {
	return []string{"HOME=" + c.Dir}
}
