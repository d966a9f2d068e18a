package main

import (
	"io"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/hub"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
)

func TestReplicaFlags(t *testing.T) {
	cfg, _, err := parseFlags([]string{"--data-dir", "/d", "--etcd-endpoints", "https://e1:2379,https://e2:2379",
		"--etcd-cafile", "/etc/etcd/ca.crt", "--etcd-certfile", "/etc/etcd/hub.crt", "--etcd-keyfile", "/etc/etcd/hub.key",
		"--ca-cert", "/ca/tls.crt", "--ca-key", "/ca/tls.key"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	wantTLS := store.TLS{CAFile: "/etc/etcd/ca.crt", CertFile: "/etc/etcd/hub.crt", KeyFile: "/etc/etcd/hub.key"}
	if cfg.EtcdTLS != wantTLS || cfg.CACertFile != "/ca/tls.crt" || cfg.CAKeyFile != "/ca/tls.key" || len(cfg.EtcdEndpoints) != 2 {
		t.Errorf("parseFlags = %+v; want the etcd TLS files %+v and the CA files", cfg, wantTLS)
	}
	cfg, _, err = parseFlags([]string{"--data-dir", "/d", "--ca-encryption-key-file", "/k/key"}, io.Discard, io.Discard)
	if err != nil || cfg.CAEncryptionKeyFile != "/k/key" {
		t.Errorf("parseFlags(--ca-encryption-key-file) = %q, %v; want /k/key", cfg.CAEncryptionKeyFile, err)
	}
	if _, _, err := parseFlags([]string{"--data-dir", "/d", "--etcd-cafile", "/ca"}, io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "--etcd-endpoints") {
		t.Errorf("parseFlags(--etcd-cafile without endpoints) = %v; want an error naming --etcd-endpoints", err)
	}
}

func TestMintFromCAFiles(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	src := caSource{certFile: filepath.Join(dir, "ca.crt"), keyFile: filepath.Join(dir, "ca.key")}
	hash, err := mint(src, "edge-1", t.TempDir(), time.Hour)
	if err != nil || hash != ca.Hash() {
		t.Errorf("mint from CA files = %s, %v; want %s", hash, err, ca.Hash())
	}
	src.dataDir = dir
	if _, err := mint(src, "edge-1", t.TempDir(), time.Hour); err == nil {
		t.Error("mint with both --data-dir and --ca-cert succeeded; want an error")
	}
	if _, err := mint(caSource{dataDir: t.TempDir()}, "edge-1", t.TempDir(), time.Hour); err == nil {
		t.Error("mint from a data dir without a CA succeeded; want an error")
	}
}

func TestServingCertLifetimeFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"--data-dir", "d"}, hub.DefaultServingCertLifetime},
		{[]string{"--data-dir", "d", "--serving-cert-lifetime", "2h"}, 2 * time.Hour},
	} {
		cfg, _, err := parseFlags(tc.args, io.Discard, io.Discard)
		if err != nil || cfg.ServingCertLifetime != tc.want {
			t.Errorf("parseFlags(%q) = lifetime %s, %v; want %s", tc.args, cfg.ServingCertLifetime, err, tc.want)
		}
	}
	cfg, _, err := parseFlags([]string{"--data-dir", t.TempDir(), "--serving-cert-lifetime", "30s"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hub.New(cfg, nil); err == nil {
		t.Errorf("hub.New with --serving-cert-lifetime 30s succeeded; want at least %s refused", hub.MinServingCertLifetime)
	}
}

func TestWebhookAllowCIDRsFlag(t *testing.T) {
	cfg, _, err := parseFlags([]string{"--data-dir", "/d", "--webhook-allow-cidrs", "127.0.0.1/8, ::1/128",
		"--webhook-allow-cidrs", "169.254.169.254/32"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("169.254.169.254/32")}
	if !slices.Equal(cfg.WebhookAllowCIDRs, want) {
		t.Errorf("parseFlags(--webhook-allow-cidrs) = %v; want %v", cfg.WebhookAllowCIDRs, want)
	}
	if _, _, err := parseFlags([]string{"--data-dir", "/d", "--webhook-allow-cidrs", "localhost"}, io.Discard, io.Discard); err == nil {
		t.Error("parseFlags(--webhook-allow-cidrs localhost) succeeded; want an error")
	}
}

func TestNamespaceFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		skipped []string
		off     bool
	}{
		{[]string{"--data-dir", "d"}, []string{"kube-.*"}, false},
		{[]string{"--data-dir", "d", "--skipped-propagating-namespaces", "kube-.*, team-a-.*"}, []string{"kube-.*", "team-a-.*"}, false},
		{[]string{"--data-dir", "d", "--skipped-propagating-namespaces", "", "--propagate-namespaces=false"}, []string{}, true},
	} {
		cfg, _, err := parseFlags(tc.args, io.Discard, io.Discard)
		if err != nil || !slices.Equal(cfg.SkippedPropagatingNamespaces, tc.skipped) || cfg.SkippedPropagatingNamespaces == nil || cfg.NoNamespacePropagation != tc.off {
			t.Errorf("parseFlags(%q) = skipped %q, off %v, %v; want %q, %v", tc.args, cfg.SkippedPropagatingNamespaces, cfg.NoNamespacePropagation, err, tc.skipped, tc.off)
		}
	}
	cfg, _, err := parseFlags([]string{"--data-dir", t.TempDir(), "--skipped-propagating-namespaces", "kube-("}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hub.New(cfg, nil); err == nil || !strings.Contains(err.Error(), "kube-(") {
		t.Errorf("hub.New with --skipped-propagating-namespaces kube-( = %v; want the bad pattern refused", err)
	}
}

func TestConnectionLimitFlags(t *testing.T) {
	cfg, _, err := parseFlags([]string{"--data-dir", "d", "--handshake-timeout", "3s", "--max-connection-idle", "1m",
		"--max-streams-per-connection", "7", "--registration-rate", "0.5", "--registration-burst", "4"}, io.Discard, io.Discard)
	if err != nil || cfg.HandshakeTimeout != 3*time.Second || cfg.MaxConnectionIdle != time.Minute ||
		cfg.MaxStreamsPerConnection != 7 || cfg.RegistrationRate != 0.5 || cfg.RegistrationBurst != 4 {
		t.Errorf("parseFlags = %+v, %v; want each connection limit as given", cfg, err)
	}
	if _, _, err := parseFlags([]string{"--data-dir", "d", "--max-streams-per-connection", "0"}, io.Discard, io.Discard); err == nil {
		t.Error("--max-streams-per-connection 0 was accepted; want a positive number")
	}
}

// TestNewClustersCordonedFlag: off by default, on with the flag.
func TestNewClustersCordonedFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--data-dir", "d"}, false},
		{[]string{"--data-dir", "d", "--new-clusters-cordoned"}, true},
	} {
		cfg, _, err := parseFlags(tc.args, io.Discard, io.Discard)
		if err != nil || cfg.NewClustersCordoned != tc.want {
			t.Errorf("parseFlags(%q) = NewClustersCordoned %v, %v; want %v", tc.args, cfg.NewClustersCordoned, err, tc.want)
		}
	}
}

// TestWatchStallTimeoutFlag: a minute by default, as given otherwise, and
// a negative one refused by hub.New.
func TestWatchStallTimeoutFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"--data-dir", "d"}, time.Minute},
		{[]string{"--data-dir", "d", "--watch-stall-timeout", "3s"}, 3 * time.Second},
	} {
		cfg, _, err := parseFlags(tc.args, io.Discard, io.Discard)
		if err != nil || cfg.WatchStallTimeout != tc.want {
			t.Errorf("parseFlags(%q) = WatchStallTimeout %v, %v; want %v", tc.args, cfg.WatchStallTimeout, err, tc.want)
		}
	}
	cfg, _, err := parseFlags([]string{"--data-dir", t.TempDir(), "--watch-stall-timeout", "-1s"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hub.New(cfg, nil); err == nil || !strings.Contains(err.Error(), "watch stall timeout") {
		t.Errorf("hub.New with --watch-stall-timeout -1s = %v; want it refused", err)
	}
}
