package client

import (
	"bytes"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestKubeconfig(t *testing.T) {
	c := Config{Address: "hub.example.com:7443", User: "alice", CAPEM: []byte("ca"), CertPEM: []byte("cert"), KeyPEM: []byte("key"), ServerName: "hub"}
	tests := []struct {
		proxy, wantServer string
	}{
		{"", "https://hub.example.com:7444/apis/cluster.karmada.io/v1alpha1/clusters/edge-1/proxy"},
		{"10.0.0.1:9443", "https://10.0.0.1:9443/apis/cluster.karmada.io/v1alpha1/clusters/edge-1/proxy"},
	}
	for _, tt := range tests {
		data, err := c.Kubeconfig(tt.proxy, "edge-1", "edge-2")
		if err != nil {
			t.Fatalf("Kubeconfig(%q) = %v", tt.proxy, err)
		}
		kc, err := clientcmd.Load(data)
		if err != nil {
			t.Fatalf("Kubeconfig(%q) is no kubeconfig: %v", tt.proxy, err)
		}
		if kc.CurrentContext != "edge-1" || len(kc.Contexts) != 2 || kc.Contexts["edge-2"].Cluster != "edge-2" {
			t.Errorf("Kubeconfig(%q) contexts = %v, current %q; want edge-1 (current) and edge-2", tt.proxy, kc.Contexts, kc.CurrentContext)
		}
		cl := kc.Clusters["edge-1"]
		if cl.Server != tt.wantServer || !bytes.Equal(cl.CertificateAuthorityData, c.CAPEM) || cl.TLSServerName != "hub" {
			t.Errorf("Kubeconfig(%q) cluster edge-1 = %s (server name %q); want %s with the hub CA", tt.proxy, cl.Server, cl.TLSServerName, tt.wantServer)
		}
		u := kc.AuthInfos[kc.Contexts["edge-1"].AuthInfo]
		if u == nil || !bytes.Equal(u.ClientCertificateData, c.CertPEM) || !bytes.Equal(u.ClientKeyData, c.KeyPEM) {
			t.Errorf("Kubeconfig(%q) user = %+v; want the credentials file's certificate and key", tt.proxy, u)
		}
	}
	if _, err := c.Kubeconfig(""); err == nil {
		t.Error("Kubeconfig without a cluster = nil error; want one")
	}
}
