package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tetherproj/tether/hub"
	"github.com/tetherproj/tether/hub/pki"
)

// Files mint-agent writes into --out.
const (
	mintCAFile   = "ca.crt"
	mintCertFile = "tls.crt"
	mintKeyFile  = "tls.key"
)

const mintUsage = `Usage: tether-hub mint-agent --data-dir DIR --cluster NAME --out DIR2 [--lifetime 8760h]

Mints an agent client certificate from the hub's CA (DIR/pki), for an admin
who hands certificates out instead of bootstrap tokens (tetherctl token
create). A name minted this way is bound on its first registration only
after tetherctl cluster approve. It writes DIR2/ca.crt (the hub CA), DIR2/tls.crt and
DIR2/tls.key (mode 0600). The certificate's identity is the cluster NAME: an
agent connecting with it is cluster NAME, and its first heartbeat registers
the cluster (creates /tether/clusters/NAME). It can run while the hub runs;
it reads only the CA files. It prints the CA hash agents pin.

Flags:
`

// defaultAgentLifetime is how long a minted agent certificate is valid: a
// year; renewal over the stream comes with bootstrap tokens.
const defaultAgentLifetime = 365 * 24 * time.Hour

// mintAgent is the mint-agent subcommand.
func mintAgent(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tether-hub mint-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "", "the hub's data directory, holding pki/ca.crt and pki/ca.key (required)")
	cluster := fs.String("cluster", "", "the member cluster's name, a DNS subdomain (required)")
	out := fs.String("out", "", "directory to write ca.crt, tls.crt and tls.key into (required)")
	lifetime := fs.Duration("lifetime", defaultAgentLifetime, "validity of the certificate")
	fs.Usage = func() { fmt.Fprint(fs.Output(), mintUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	hash, err := mint(*dataDir, *cluster, *out, *lifetime)
	if err != nil {
		fmt.Fprintf(stderr, "tether-hub mint-agent: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "agent certificate for cluster %q written to %s (ca_hash %s)\n", *cluster, *out, hash)
	return 0
}

// mint issues the certificate and writes the files; it returns the CA hash.
func mint(dataDir, cluster, out string, lifetime time.Duration) (string, error) {
	switch {
	case dataDir == "" || cluster == "" || out == "":
		return "", errors.New("--data-dir, --cluster and --out are required")
	case len(validation.IsDNS1123Subdomain(cluster)) > 0:
		return "", fmt.Errorf("--cluster %q: %s", cluster, strings.Join(validation.IsDNS1123Subdomain(cluster), "; "))
	}
	pkiDir := filepath.Join(dataDir, hub.PKIDir)
	if _, err := os.Stat(filepath.Join(pkiDir, "ca.crt")); err != nil {
		return "", fmt.Errorf("no CA in %s (start the hub once to create it): %w", pkiDir, err)
	}
	ca, err := pki.LoadOrCreateCA(pkiDir)
	if err != nil {
		return "", err
	}
	issued, err := ca.IssueClient(pki.Identity{Name: cluster, Kind: pki.KindAgent}, lifetime)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return "", err
	}
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{{mintCAFile, ca.CertPEM, 0o644}, {mintCertFile, issued.CertPEM, 0o644}, {mintKeyFile, issued.KeyPEM, 0o600}} {
		if err := os.WriteFile(filepath.Join(out, f.name), f.data, f.mode); err != nil {
			return "", err
		}
	}
	return ca.Hash(), nil
}
