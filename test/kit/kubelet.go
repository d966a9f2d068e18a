package kit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// fileKwokKubelet is kwok's configuration of the kubelet API it serves
// with ClusterSpec.KubeletServer: what logs, exec and port-forward do.
const fileKwokKubelet = "kwok-kubelet.yaml"

// fileLogs is every pod's log in a cluster with ClusterSpec.KubeletServer.
const fileLogs = "pods.log"

// LogsPath is the file kwok serves as the log of every container of the
// cluster (followed: lines appended show up in `kubectl logs -f`), when
// the cluster serves the kubelet API (ClusterSpec.KubeletServer). Write
// it with AppendLog: kwok reads the CRI log format.
func (c *Cluster) LogsPath() string { return filepath.Join(c.Dir, fileLogs) }

// kubeletConfig is kwok's configuration of its kubelet API: every
// container's log is LogsPath, followed; exec runs the command on this
// machine in the cluster's directory; a port-forward to any port of any pod
// runs cat, so the bytes sent come back.
func (c *Cluster) kubeletConfig() []byte {
	return fmt.Appendf(nil, `apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: kit
spec:
  logs:
  - logsFile: %q
    follow: true
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata:
  name: kit
spec:
  execs:
  - local:
      workDir: %q
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterPortForward
metadata:
  name: kit
spec:
  forwards:
  - command: ["cat"]
`, c.LogsPath(), c.Dir)
}

// kubeletArgs are kwok's flags for serving the kubelet API on port: its
// nodes report 127.0.0.1 and port, so the API server's logs, exec and
// port-forward reach kwok (the API server does not verify a kubelet's
// certificate without --kubelet-certificate-authority).
func (c *Cluster) kubeletArgs(port int) []string {
	return []string{
		"--config=" + c.path(fileKwokKubelet),
		"--server-address=127.0.0.1:" + strconv.Itoa(port),
		"--node-port=" + strconv.Itoa(port),
		"--node-ip=127.0.0.1",
		"--tls-cert-file=" + c.path(fileServingCert),
		"--tls-private-key-file=" + c.path(fileServingKey),
	}
}

// AppendLog appends lines to LogsPath in the CRI log format kwok reads
// (RFC 3339 time, stream, tag, message), as a container's stdout.
func (c *Cluster) AppendLog(lines ...string) error {
	f, err := os.OpenFile(c.LogsPath(), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	for _, l := range lines {
		if _, err := fmt.Fprintf(f, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), l); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
