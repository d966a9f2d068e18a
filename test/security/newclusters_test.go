package security

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
)

// TestHostileNewClusters: a hub started with --new-clusters-cordoned, on
// an etcd of its own (a real etcd process) whose writes the test watches
// from outside the hub. A new cluster whose labels a policy selects gets
// no work until an admin uncordons it; a registration with an invalid
// label is refused naming it; an agent whose API list changes at every
// heartbeat costs a bounded count of etcd writes.
func TestHostileNewClusters(t *testing.T) {
	etcd := etcdtest.Start(t, etcdtest.Options{})
	e := newHostileEnv(t, "--new-clusters-cordoned", "--etcd-endpoints", strings.Join(etcd.Endpoints, ","))
	cli, err := clientv3.New(clientv3.Config{Endpoints: etcd.Endpoints, DialTimeout: rpcTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	runAttacks(t, e, []attack{
		{"new cluster with labels a policy selects", cordonedNewCluster},
		hostileCase{"Register with an invalid label", func(t *testing.T, e *hostileEnv) error {
			_, err := registerTopology(t, e.h, e.tok, "badlabels", "", &agentv1.Topology{Labels: map[string]string{"tier": "edge", "bad key!": "x"}})
			return err
		}, codes.InvalidArgument, []string{"bad key!"}}.attack(),
		{"heartbeats whose API list changes every time", func(t *testing.T, e *hostileEnv) string { return changingAPIs(t, e, cli) }},
	})
}

// cordonedNewCluster: a cluster registers with labels tier=edge-N, which a
// policy's label selector picks, and connects Ready serving ConfigMaps.
// It starts cordoned: the scheduler rejects it and its stream gets no
// work; once uncordoned, the ConfigMap's work arrives.
func cordonedNewCluster(t *testing.T, e *hostileEnv) string {
	name := fmt.Sprintf("fresh-%d", e.attacks)
	tier := "edge-" + name
	reg, err := registerTopology(t, e.h, e.tok, name, "", &agentv1.Topology{Labels: map[string]string{"tier": tier}})
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	clusterAPI := hubv1.NewClusterServiceClient(e.admin)
	got, err := clusterAPI.GetCluster(rpcCtx(t), &hubv1.GetClusterRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if c := got.GetCluster(); !c.GetCordoned() || c.GetLabels()["tier"] != tier {
		t.Fatalf("new cluster %s: cordoned %v, labels %v; want cordoned with tier=%s", name, c.GetCordoned(), c.GetLabels(), tier)
	}
	s, err := openStream(t, e.h, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.cancel()
	if err := s.send(configMapHeartbeat()); err != nil {
		t.Fatal(err)
	}
	manifests := configMap(name, "v") + fmt.Sprintf(`---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: %s}]
  placement:
    clusterAffinity: {labelSelector: {matchLabels: {tier: %s}}}
`, name, name, tier)
	if _, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(manifests), DefaultNamespace: "default"}); err != nil {
		t.Fatal(err)
	}
	tmpl := &hubv1.ObjectRef{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: name}
	defer e.deleteAll(t, []*hubv1.ObjectRef{{ApiVersion: "policy.tether.io/v1alpha1", Kind: "PropagationPolicy", Namespace: "default", Name: name}, tmpl})
	places := hubv1.NewPlacementServiceClient(e.admin)
	var why string
	poll(t, servingWait*4, name+" rejected by the scheduler", func() (bool, string) {
		resp, err := places.GetPlacement(rpcCtx(t), &hubv1.GetPlacementRequest{Template: tmpl})
		for _, r := range resp.GetPlacement().GetRejections() {
			if r.GetCluster() == name {
				why = strings.Join(r.GetReasons(), "; ")
				return true, ""
			}
		}
		return false, fmt.Sprint(resp, err)
	})
	for _, u := range s.sync {
		t.Errorf("cordoned %s was sent work %s at its sync", name, u.GetWorkKey())
	}
	select {
	case msg := <-s.msgs:
		if u := msg.GetWorkUpsert(); u != nil {
			t.Errorf("cordoned %s was sent work %s", name, u.GetWorkKey())
		}
	default:
	}
	if _, err := clusterAPI.Uncordon(rpcCtx(t), &hubv1.UncordonRequest{Name: name}); err != nil {
		t.Fatal(err)
	}
	u, err := s.nextUpsert(servingWait * 4)
	if err != nil || !strings.Contains(u.GetWorkKey(), name) {
		t.Fatalf("after uncordon %s got %v, %v; want the ConfigMap's work", name, u.GetWorkKey(), err)
	}
	return fmt.Sprintf("contained: no work while cordoned (%s); the work once uncordoned", why)
}

// configMapHeartbeat reports a cluster Ready, serving ConfigMaps.
func configMapHeartbeat() *agentv1.AgentMessage {
	return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{
		AgentVersion: "security-test",
		Conditions:   []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
		ApiEnablements: []*agentv1.APIEnablement{{GroupVersion: "v1", Resources: []*agentv1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}}}},
	}}}
}

// changingBeats is how many heartbeats changingAPIs sends, each with
// another API list, changingGap apart: within the hub's default rate of
// heartbeats (agentapi.DefaultHeartbeatRate, 1 a second, bursts of 10),
// and each after at least one of the Publisher's one-second flushes.
const (
	changingBeats = 10
	changingGap   = 1100 * time.Millisecond
)

// changingAPIs: the hostile agent sends changingBeats heartbeats, each with
// another API list. The hub writes the cluster's heartbeat record (etcd
// key store.HeartbeatKey, watched here with the etcd client) at most once
// per liveness.DefaultContentInterval: the first list at once, the last
// one when the interval has passed, none in between.
func changingAPIs(t *testing.T, e *hostileEnv, cli *clientv3.Client) string {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	key := store.HeartbeatKey(hostileCluster)
	var mu sync.Mutex
	var groups []string // the API group version of each record written
	watch := cli.Watch(ctx, key, clientv3.WithCreatedNotify())
	if resp := <-watch; !resp.Created {
		t.Fatalf("watch %s: %v", key, resp.Err())
	}
	go func() {
		for resp := range watch {
			mu.Lock()
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypePut {
					groups = append(groups, recordGroup(ev.Kv.Value))
				}
			}
			mu.Unlock()
		}
	}()
	written := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), groups...)
	}
	s, err := openStream(t, e.h, e.hostile)
	if err != nil {
		t.Fatal(err)
	}
	defer s.cancel()
	start := time.Now()
	group := func(i int) string { return fmt.Sprintf("changing%d.example.com/v1", i) }
	for i := range changingBeats {
		if i > 0 {
			time.Sleep(changingGap) // the pace of the attack, not a wait for the hub
		}
		if err := s.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{
			AgentVersion: "changing",
			Conditions:   []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
			ApiEnablements: []*agentv1.APIEnablement{{GroupVersion: group(i), Resources: []*agentv1.APIResource{
				{Name: "widgets", Kind: "Widget", Namespaced: true}}}},
		}}}); err != nil {
			t.Fatalf("heartbeat %d: %v", i, err)
		}
	}
	last := group(changingBeats - 1)
	poll(t, liveness.DefaultContentInterval+servingWait, "the last API list written to "+key, func() (bool, string) {
		w := written()
		return len(w) > 0 && w[len(w)-1] == last, fmt.Sprint(w)
	})
	took := time.Since(start)
	w := written()
	if _, _, ended := s.ended(0); ended {
		t.Errorf("the stream ended within the heartbeat rate: %v", s.err)
	}
	// One write at once, then one per content interval begun since.
	if limit := 1 + int(took/liveness.DefaultContentInterval) + 1; len(w) > limit {
		t.Errorf("%d heartbeats with changing API lists: %d writes of %s in %s (%v); want at most %d", changingBeats, len(w), key, took.Round(time.Millisecond), w, limit)
	}
	t.Logf("records written: %v", w)
	return fmt.Sprintf("contained: %d API lists in %.1f s, %d etcd writes of the record, the last list kept", changingBeats, took.Seconds(), len(w))
}

// recordGroup is the first API group version of a heartbeat record
// (hub/clusters: JSON {"heartbeat": protobuf}), or why it has none.
func recordGroup(value []byte) string {
	var c struct {
		Heartbeat []byte `json:"heartbeat"`
	}
	if err := json.Unmarshal(value, &c); err != nil {
		return "undecodable: " + err.Error()
	}
	var hb agentv1.Heartbeat
	if err := proto.Unmarshal(c.Heartbeat, &hb); err != nil {
		return "undecodable: " + err.Error()
	}
	if len(hb.GetApiEnablements()) == 0 {
		return "none"
	}
	return hb.GetApiEnablements()[0].GetGroupVersion()
}
