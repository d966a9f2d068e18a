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
	"github.com/tetherproj/tether/internal/durable"
)

// Files mint-agent writes into --out.
const (
	mintCAFile   = "ca.crt"
	mintCertFile = "tls.crt"
	mintKeyFile  = "tls.key"
)

const mintUsage = `Usage: tether-hub mint-agent --data-dir DIR --cluster NAME --out DIR2 [--lifetime 8760h]
       tether-hub mint-agent --ca-cert FILE --ca-key FILE --cluster NAME --out DIR2

Mints an agent client certificate from the hub's CA (DIR/pki, or the files
the replicas are given with --ca-cert/--ca-key), for an admin
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
	dataDir := fs.String("data-dir", "", "the hub's data directory, holding pki/ca.crt and pki/ca.key (required unless --ca-cert)")
	var src caSource
	fs.StringVar(&src.certFile, "ca-cert", "", "the hub CA's certificate, as given to the hub's --ca-cert (instead of --data-dir)")
	fs.StringVar(&src.keyFile, "ca-key", "", "the hub CA's key, as given to the hub's --ca-key")
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
	src.dataDir = *dataDir
	hash, err := mint(src, *cluster, *out, *lifetime)
	if err != nil {
		fmt.Fprintf(stderr, "tether-hub mint-agent: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "agent certificate for cluster %q written to %s (ca_hash %s)\n", *cluster, *out, hash)
	return 0
}

// caSource is where mint-agent reads the CA: the files, or the data dir.
type caSource struct {
	dataDir, certFile, keyFile string
}

func (c caSource) load() (*pki.CA, error) {
	switch {
	case c.certFile != "" || c.keyFile != "":
		if c.certFile == "" || c.keyFile == "" || c.dataDir != "" {
			return nil, errors.New("give --ca-cert and --ca-key together, without --data-dir")
		}
		return pki.LoadCA(c.certFile, c.keyFile)
	case c.dataDir == "":
		return nil, errors.New("--data-dir (or --ca-cert and --ca-key) is required")
	}
	pkiDir := filepath.Join(c.dataDir, hub.PKIDir)
	if !pki.HasCA(pkiDir) {
		return nil, fmt.Errorf("no CA in %s (start the hub once to create it; a hub given --ca-cert/--ca-key or --ca-encryption-key-file keeps none there)", pkiDir)
	}
	return pki.LoadOrCreateCA(pkiDir)
}

// mint issues the certificate and writes the files; it returns the CA hash.
func mint(src caSource, cluster, out string, lifetime time.Duration) (string, error) {
	switch {
	case cluster == "" || out == "":
		return "", errors.New("--cluster and --out are required")
	case len(validation.IsDNS1123Subdomain(cluster)) > 0:
		return "", fmt.Errorf("--cluster %q: %s", cluster, strings.Join(validation.IsDNS1123Subdomain(cluster), "; "))
	}
	ca, err := src.load()
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
		if err := durable.WriteFile(filepath.Join(out, f.name), f.data, f.mode); err != nil {
			return "", err
		}
	}
	return ca.Hash(), nil
}
