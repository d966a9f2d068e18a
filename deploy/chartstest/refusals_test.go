package chartstest

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// agentOK are the agent chart's required values, followed by a newline.
const agentOK = "cluster: e\nhub: h:1\ncaHash: " + testCAHash + "\nbootstrapToken: {value: t}\n"

// TestChartRefusals: value combinations the binaries would refuse at start
// (or that would start something unsafe) fail at helm template, naming the
// value.
func TestChartRefusals(t *testing.T) {
	helm := helmBin(t)
	for _, tc := range []struct{ chart, values, want string }{
		{"tether-hub", "replicas: 3", "replicas > 1 needs etcd.endpoints"},
		{"tether-hub", "replicas: 2\netcd: {endpoints: [https://e:2379]}", "several replicas need one CA"},
		{"tether-hub", "ca: {existingSecret: a, encryptionKeySecret: b}", "are exclusive"},
		{"tether-hub", "etcd: {endpoints: [http://e:2379], tls: {existingSecret: x}}", "etcd.tls needs https://"},
		{"tether-hub", "etcd: {tls: {existingSecret: x}}", "etcd.tls.existingSecret needs etcd.endpoints"},
		{"tether-agent", "hub: h:1", "cluster: required"},
		{"tether-agent", "cluster: Edge_1\nhub: h:1", "cluster: required, a DNS subdomain"},
		{"tether-agent", "cluster: e\ncaHash: " + testCAHash + "\nbootstrapToken: {value: t}", "hub: required"},
		{"tether-agent", "cluster: e\nhub: h:1\ncaHash: sha256:12\nbootstrapToken: {value: t}", "caHash: required"},
		{"tether-agent", "cluster: e\nhub: h:1\ncaHash: " + testCAHash, "bootstrapToken.value or bootstrapToken.existingSecret"},
		{"tether-agent", "cluster: e\nhub: h:1\ncaHash: " + testCAHash + "\nbootstrapToken: {value: t}\npersistence: {type: hostPath}", "want pvc or emptyDir"},
		{"tether-agent", agentOK + "interpreter: {luaMemoryFraction: 2}", "interpreter.luaMemoryFraction 2: want a share"},
		{"tether-agent", agentOK + "interpreter: {luaMemoryFraction: 0}", "interpreter.luaMemoryFraction 0: want a share"},
		{"tether-agent", agentOK + "interpreter: {luaConcurrency: 0}", "interpreter.luaConcurrency 0: want 1 or more"},
		{"tether-agent", agentOK + "interpreter: {webhooks: {refuse: true, hosts: [h.example.com]}}", "interpreter.webhooks.hosts: not with interpreter.webhooks.refuse"},
	} {
		cmd := exec.Command(helm, "template", release, filepath.Join("..", "charts", tc.chart), "--values", "-")
		cmd.Stdin = strings.NewReader(tc.values)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("helm template %s with %q = %v, %q; want a refusal saying %q", tc.chart, tc.values, err, stderr.String(), tc.want)
		}
	}
}
