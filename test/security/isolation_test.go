package security

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// workWait bounds the wait for a work to reach an agent after an Apply.
const workWait = 30 * time.Second

const onlyBYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: only-b, namespace: default, labels: {app: only-b}}
spec:
  replicas: 1
  selector: {matchLabels: {app: only-b}}
  template:
    metadata: {labels: {app: only-b}}
    spec: {containers: [{name: main, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: b-only, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: only-b}]
  placement:
    clusterAffinity: {clusterNames: [edge-b]}
`

const keyOnlyB = "apps/Deployment/default/only-b"

// TestClusterCannotTouchAnotherClustersWorks: cluster A's certificate
// never receives cluster B's work, not even by claiming to hold it in
// Hello; its acks and status reports for B's work change nothing, while
// B's own report is taken.
func TestClusterCannotTouchAnotherClustersWorks(t *testing.T) {
	h := startHub(t)
	tok := createToken(t, h)
	regA, err := register(t, h, tok, "edge-a", nil)
	if err != nil {
		t.Fatal(err)
	}
	regB, err := register(t, h, tok, "edge-b", nil)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := openStream(t, h, regA)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := openStream(t, h, regB)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*agentStream{sa, sb} {
		if err := s.heartbeat(); err != nil {
			t.Fatal(err)
		}
	}
	admin := dial(t, h.addr, userTLS(t, h.adminConf()))
	objects := hubv1.NewObjectServiceClient(admin)
	if _, err := objects.Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(onlyBYAML)}); err != nil {
		t.Fatal(err)
	}
	work, err := sb.nextUpsert(workWait)
	if err != nil || work.GetWorkKey() != keyOnlyB {
		t.Fatalf("cluster B's work = %v, %v; want %s", work, err, keyOnlyB)
	}

	// A forges: acks B's work and reports a status for it.
	forged := report(work.GetVersion(), 99)
	for _, m := range []*agentv1.AgentMessage{
		{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{WorkKey: keyOnlyB, Version: work.GetVersion(), Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}}},
		{Message: &agentv1.AgentMessage_StatusReport{StatusReport: forged}},
	} {
		if err := sa.send(m); err != nil {
			t.Fatalf("send as A: %v", err)
		}
	}
	// B's own report is taken: the hub's status shows it.
	if err := sb.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: report(work.GetVersion(), 1)}}); err != nil {
		t.Fatal(err)
	}
	ready := func() int {
		resp, err := objects.Get(rpcCtx(t), &hubv1.GetRequest{Ref: &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "only-b"}})
		if err != nil {
			return -1
		}
		var obj struct {
			Status struct {
				ReadyReplicas int `json:"readyReplicas"`
			} `json:"status"`
		}
		_ = json.Unmarshal(resp.GetObject().GetObjectJson(), &obj)
		return obj.Status.ReadyReplicas
	}
	poll(t, workWait, "B's status report reflected", func() (bool, string) { n := ready(); return n == 1, fmt.Sprint(n) })
	// A's forged report came first on its stream; anything it changed
	// would show by now or within the aggregator's next flush.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if n := ready(); n != 1 {
			t.Fatalf("readyReplicas = %d after A's forged report; want B's 1", n)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A reconnects claiming to hold B's work: it is neither sent nor
	// deleted for A, and B's stream is untouched.
	sa.cancel()
	sa2, err := openStream(t, h, regA, &agentv1.HeldWork{WorkKey: keyOnlyB, Version: work.GetVersion()})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range sa2.sync {
		t.Errorf("cluster A got work %s", u.GetWorkKey())
	}
	select {
	case m := <-sa2.msgs:
		if m.GetWorkUpsert() != nil {
			t.Errorf("cluster A got %v", m)
		}
	case <-time.After(500 * time.Millisecond):
	}
	if err := sb.heartbeat(); err != nil {
		t.Errorf("cluster B's stream: %v", err)
	}
}

// report is a status report of only-b with ready replicas.
func report(version string, ready int) *agentv1.StatusReport {
	return &agentv1.StatusReport{WorkKey: keyOnlyB, Version: version, Digest: fmt.Sprintf("d%d", ready),
		Manifests: []*agentv1.ManifestStatus{{
			Identity:   &agentv1.ObjectIdentity{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "only-b"},
			StatusJson: []byte(fmt.Sprintf(`{"replicas":%d,"readyReplicas":%d,"updatedReplicas":%d,"availableReplicas":%d}`, ready, ready, ready, ready)),
			Health:     agentv1.Health_HEALTH_HEALTHY, Applied: true,
		}}}
}
