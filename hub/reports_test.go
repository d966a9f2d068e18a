package hub_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub"
	"github.com/tetherproj/tether/hub/leader"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
)

// Two ConfigMaps placed on edge-1 by one policy.
const (
	reportsCluster   = "edge-1"
	reportsManifests = `apiVersion: v1
kind: ConfigMap
metadata: {name: cfg-a, namespace: default}
data: {k: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg-b, namespace: default}
data: {k: b}
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: cfgs, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  placement:
    clusterAffinity: {clusterNames: [edge-1]}
`
	cfgAKey = "core/ConfigMap/default/cfg-a"
	cfgBKey = "core/ConfigMap/default/cfg-b"
)

// TestReportsReachTheLeader: edge-1's agent streams to a replica that
// does not lead. What it acks and reports reaches the leader's aggregator
// (through etcd): the binding's item for edge-1 says applied, Healthy and
// the reported status. Then the leader, which never held the stream, and a
// replica started afterwards know the digests of those reports: a
// reconnecting agent is asked only for the status whose digest differs.
func TestReportsReachTheLeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*replicaTimeout)
	defer cancel()
	e := etcdtest.Start(t, etcdtest.Options{TLS: true})
	st := openStore(t, ctx, e)
	certFile, keyFile, _ := writeCA(t)
	withCA := func() hub.Config {
		cfg := baseConfig(t, e)
		cfg.CACertFile, cfg.CAKeyFile = certFile, keyFile
		return cfg
	}
	first := runReplica(t, withCA())
	first.serving(t)
	waitLeader(t, ctx, st, first)
	follower := runReplica(t, withCA())
	follower.serving(t)

	cert := follower.registerAgent(t, ctx, reportsCluster)
	sctx, stopStream := context.WithCancel(ctx)
	agent := follower.openAgent(t, sctx, cert, &agentv1.Hello{AgentVersion: "test"})
	agent.send(t, &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: readyHeartbeat()}})
	first.apply(t, ctx, reportsManifests)
	answered := agent.answerWorks(cfgAKey, cfgBKey) // acks and reports every version it is sent, as an agent does
	for _, key := range []string{cfgAKey, cfgBKey} {
		item := waitItem(t, ctx, st, key, func(it configv1alpha1.AggregatedStatusItem) bool {
			return it.Applied && it.Health == configv1alpha1.ResourceHealthy && it.Status != nil
		})
		if got, want := string(item.Status.Raw), `{"observed":"`+key+`"}`; got != want {
			t.Errorf("binding %s: item status %s; want %s", key, got, want)
		}
	}
	stopStream()
	versions := <-answered

	// The agent reconnects: it reported cfg-a's digest, and a digest of
	// cfg-b the hub never received.
	hello := &agentv1.Hello{AgentVersion: "test", LastHubIdentity: agent.identity, HeldWorks: []*agentv1.HeldWork{
		{WorkKey: cfgAKey, Version: versions[cfgAKey]}, {WorkKey: cfgBKey, Version: versions[cfgBKey]}},
		ReportedStatuses: []*agentv1.ReportedStatus{
			{WorkKey: cfgAKey, Version: versions[cfgAKey], StatusDigest: "digest-" + cfgAKey},
			{WorkKey: cfgBKey, Version: versions[cfgBKey], StatusDigest: "never-reported"}}}
	restarted := runReplica(t, withCA())
	restarted.serving(t)
	for name, r := range map[string]*replica{"the leader": first, "a replica started afterwards": restarted} {
		rctx, stop := context.WithCancel(ctx)
		got := r.openAgent(t, rctx, cert, hello).awaitStatusRequest(t)
		if want := []string{cfgBKey}; !slices.Equal(got, want) {
			t.Errorf("%s asks a reconnecting agent for the statuses of %v; want only %v (it holds cfg-a's digest)", name, got, want)
		}
		stop()
	}

	// Removing the cluster deletes its relayed records.
	adminTLS, err := first.adminConf(t).TLS()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hubv1.NewClusterServiceClient(dial(t, follower.addr, adminTLS)).Remove(ctx, &hubv1.RemoveRequest{Name: reportsCluster}); err != nil {
		t.Fatalf("Remove %s: %v", reportsCluster, err)
	}
	for {
		n, err := st.Count(ctx, store.ReportsOf(reportsCluster))
		if err != nil {
			t.Fatalf("count relayed records: %v", err)
		}
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d relayed records of removed cluster %s left", n, reportsCluster)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// openStore opens a client of the test's etcd.
func openStore(t *testing.T, ctx context.Context, e *etcdtest.Etcd) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, store.Config{Endpoints: e.Endpoints,
		TLS: store.TLS{CAFile: e.CAFile, CertFile: e.CertFile, KeyFile: e.KeyFile}}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("open the test's etcd: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// waitLeader waits until r holds the leadership key.
func waitLeader(t *testing.T, ctx context.Context, st *store.Store, r *replica) {
	t.Helper()
	port := r.addr[strings.LastIndex(r.addr, ":"):]
	for {
		kvs, _, err := st.List(ctx, leader.DefaultPrefix+"/")
		if err != nil {
			t.Fatalf("list leadership keys: %v", err)
		}
		slices.SortFunc(kvs, func(a, b store.KV) int { return int(a.CreateRevision - b.CreateRevision) })
		if len(kvs) > 0 && strings.HasSuffix(string(kvs[0].Value), port) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("replica %s not leader: %v", r.addr, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitItem waits until the binding of the template key has an item for
// reportsCluster that satisfies ok, and returns it.
func waitItem(t *testing.T, ctx context.Context, st *store.Store, key string, ok func(configv1alpha1.AggregatedStatusItem) bool) configv1alpha1.AggregatedStatusItem {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, replicaTimeout/3)
	defer cancel()
	var last []configv1alpha1.AggregatedStatusItem
	for {
		kv, err := st.Get(wctx, store.BindingsPrefix+key)
		if err != nil && !errors.Is(err, store.ErrNotFound) && wctx.Err() == nil {
			t.Fatalf("get binding %s: %v", key, err)
		}
		if err == nil {
			b := &workv1alpha1.ResourceBinding{}
			if err := json.Unmarshal(kv.Value, b); err != nil {
				t.Fatalf("decode binding %s: %v", key, err)
			}
			last = b.Status.AggregatedStatus
			for _, it := range last {
				if it.ClusterName == reportsCluster && ok(it) {
					return it
				}
			}
		}
		select {
		case <-wctx.Done():
			data, _ := json.Marshal(last)
			t.Fatalf("binding %s: aggregated status %s; want edge-1 applied, Healthy, with its status", key, data)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// apply applies manifests through r's client API as the admin.
func (r *replica) apply(t *testing.T, ctx context.Context, manifests string) {
	t.Helper()
	adminTLS, err := r.adminConf(t).TLS()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hubv1.NewObjectServiceClient(dial(t, r.addr, adminTLS)).Apply(ctx, &hubv1.ApplyRequest{Manifests: []byte(manifests)}); err != nil {
		t.Fatalf("Apply through %s: %v", r.addr, err)
	}
}

// agentStream is one agent stream opened by a test.
type agentStream struct {
	addr     string
	stream   agentv1.AgentService_ConnectClient
	identity string // the hub identity of Welcome
}

// openAgent opens cert's agent stream to r with hello and reads Welcome.
func (r *replica) openAgent(t *testing.T, ctx context.Context, cert tls.Certificate, hello *agentv1.Hello) *agentStream {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(r.adminConf(t).CertificateAuthority))
	conn := dial(t, r.addr, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	stream, err := agentv1.NewAgentServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Fatalf("Connect to %s: %v", r.addr, err)
	}
	s := &agentStream{addr: r.addr, stream: stream}
	s.send(t, &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: hello}})
	m := s.recv(t)
	if m.GetWelcome() == nil {
		t.Fatalf("first message from %s = %v; want Welcome", r.addr, m)
	}
	s.identity = m.GetWelcome().GetHubIdentity()
	return s
}

func (s *agentStream) send(t *testing.T, m *agentv1.AgentMessage) {
	t.Helper()
	if err := s.stream.Send(m); err != nil {
		t.Fatalf("send to %s: %v", s.addr, err)
	}
}

func (s *agentStream) recv(t *testing.T) *agentv1.HubMessage {
	t.Helper()
	m, err := s.stream.Recv()
	if err != nil {
		t.Fatalf("receive from %s: %v", s.addr, err)
	}
	return m
}

// answerWorks acks and reports, applied and Healthy, every version of the
// works keys the hub sends until the stream ends, and then gives the last
// version of each.
func (s *agentStream) answerWorks(keys ...string) <-chan map[string]string {
	out := make(chan map[string]string, 1)
	go func() {
		versions := make(map[string]string)
		defer func() { out <- versions }()
		for {
			m, err := s.stream.Recv()
			if err != nil {
				return
			}
			up := m.GetWorkUpsert()
			if up == nil || !slices.Contains(keys, up.GetWorkKey()) {
				continue
			}
			key, version := up.GetWorkKey(), up.GetVersion()
			versions[key] = version
			ack := &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{
				WorkKey: key, Version: version, Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}}}
			report := &agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: configMapReport(key, version)}}
			if s.stream.Send(ack) != nil || s.stream.Send(report) != nil {
				return
			}
		}
	}()
	return out
}

// awaitStatusRequest reads until the hub asks for statuses and returns
// the keys asked for.
func (s *agentStream) awaitStatusRequest(t *testing.T) []string {
	t.Helper()
	for {
		if req := s.recv(t).GetStatusRequest(); req != nil {
			return req.GetWorkKeys()
		}
	}
}

// readyHeartbeat is a heartbeat of a Ready cluster.
func readyHeartbeat() *agentv1.Heartbeat {
	return &agentv1.Heartbeat{AgentVersion: "test", KubernetesVersion: "v1.34.0",
		ApiEnablements: []*agentv1.APIEnablement{{GroupVersion: "v1", Resources: []*agentv1.APIResource{{Name: "configmaps", Kind: "ConfigMap"}}}},
		Conditions:     []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}}}
}

// configMapReport is the status report of the ConfigMap of work key:
// applied, Healthy, a status naming the key.
func configMapReport(key, version string) *agentv1.StatusReport {
	name := key[strings.LastIndex(key, "/")+1:]
	return &agentv1.StatusReport{WorkKey: key, Version: version, Digest: "digest-" + key, Manifests: []*agentv1.ManifestStatus{{
		Identity:   &agentv1.ObjectIdentity{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: name},
		StatusJson: []byte(`{"observed":"` + key + `"}`), Health: agentv1.Health_HEALTH_HEALTHY, Applied: true}}}
}
