package faults_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
)

// The status flood (issue 34, scenario g): a raw client with edge-2's
// credentials reports every work it holds over and over, each report a
// changed status of floodStatusBytes, for floodFor, against a hub whose
// embedded etcd has a quota of floodQuota.
const (
	floodQuota       = "512Mi"
	floodWorks       = 60
	floodStatusBytes = 60 << 10
	floodFor         = 150 * time.Second
	floodCluster     = "edge-2"
	// floodMaxGrowth bounds how much the etcd database may grow during
	// the flood: the flooding cluster's budget (256 KiB a second of
	// reports, bursts of 4 MiB, each held report rewriting its binding of
	// about its size) over floodFor is some 42 MiB; the rest is margin for
	// the hub's other writes. Unbudgeted, the flood grew it by some 140 MB
	// in 150 s on two cores: a 512 MiB etcd full within ten minutes.
	floodMaxGrowth  = 64 << 20
	floodQuotaBytes = 512 << 20
)

// floodProbes are the clusters whose agents share the hub with the
// flooding one: their streams must stay up and their leases valid.
var floodProbes = []string{"edge-1", "regional-1"}

// floodSetup runs the hub on a 512 MiB etcd.
var floodSetup = setup{hubArgs: []string{"--embedded-etcd-quota", floodQuota}}

// floodConfigMaps are floodWorks ConfigMaps placed in every cluster.
func floodConfigMaps() []byte {
	var b strings.Builder
	for i := range floodWorks {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: faults-flood-%d, labels: {faults: flood}}\ndata: {i: \"%d\"}\n---\n", i, i)
	}
	b.WriteString(`apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: faults-flood}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {faults: flood}}}]
  placement: {replicaScheduling: {replicaSchedulingType: Duplicated}}
`)
	return []byte(b.String())
}

// statusFlood: edge-2's agent is replaced by a raw gRPC client with its
// credentials that reports changing 60 KiB statuses of its 60-odd works as
// fast as the hub takes them, for 150 s, against a 512 MiB etcd. The hub's
// etcd never raises NOSPACE (a write after the flood succeeds, its log
// has no quota alarm) and grows by no more than the cluster's write budget
// allows (floodMaxGrowth), the probe agents on the same hub keep their
// streams and stay Ready throughout, and nothing is deleted in any member.
func statusFlood(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := x.client.Apply(ctx, floodConfigMaps()); err != nil {
		t.Fatalf("apply the flood's ConfigMaps: %v", err)
	}
	x.waitFloodWorks(ctx)
	hubLog := x.hubLog()
	logFrom := fileSize(hubLog)
	dbPath := filepath.Join(x.fleet.HubDir, "etcd", "member", "snap", "db")
	dbBefore := fileSize(dbPath)
	r := x.begin(t.Name())
	if err := x.fleet.Kill(fleet.RoleAgent, floodCluster); err != nil {
		t.Fatal(err)
	}
	f := &flooder{x: x}
	fctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { f.run(fctx) })
	r.hold(floodFor)
	stop()
	wg.Wait()

	probeEnds := streamEnds(hubLog, logFrom, floodProbes)
	alarms := quotaAlarms(x.fleet.HubDir, hubLog)
	dbBytes := fileSize(dbPath)
	growth := dbBytes - dbBefore
	t.Logf("FIGURES %s: reports_sent=%d report_bytes=%d flood_streams=%d flood_stream_ends=%q probe_stream_ends=%d etcd_db_bytes=%d etcd_db_growth=%d quota_full_in=%s quota_alarms=%d",
		r.name, f.reports.Load(), f.bytes.Load(), f.streams.Load(), f.endings(), probeEnds, dbBytes, growth, fillTime(dbBytes, growth), len(alarms))
	if f.reports.Load() == 0 {
		t.Fatal("the flooding client sent no report")
	}
	if growth > floodMaxGrowth {
		t.Errorf("etcd's database grew by %d bytes during the %s flood; want at most %d (the cluster's write budget): at this rate a %s etcd is full in %s",
			growth, floodFor, floodMaxGrowth, floodQuota, fillTime(dbBytes, growth))
	}
	for _, a := range alarms {
		t.Errorf("etcd's quota was hit during the flood: %s", a)
	}
	if _, err := x.client.Apply(ctx, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: faults-after-flood, namespace: default}\ndata: {a: b}\n")); err != nil {
		t.Errorf("apply after the flood: %v; want the store to take writes (no NOSPACE)", err)
	}
	for _, c := range floodProbes {
		if at, ok := r.unknownAt[c]; ok {
			t.Errorf("probe cluster %s not Ready at flood+%s; want Ready throughout", c, at.Sub(r.faultAt).Round(time.Second))
		}
	}
	if probeEnds != 0 {
		t.Errorf("%d streams of the probe agents %v ended during the flood; want none", probeEnds, floodProbes)
	}
	if err := x.fleet.Restart(ctx, fleet.RoleAgent, floodCluster); err != nil {
		t.Fatal(err)
	}
	r.healed()
	r.converge()
	r.finish()
}

// waitFloodWorks waits until the flooding cluster's member holds every
// flood ConfigMap: the hub has rendered them all for it.
func (x *fixture) waitFloodWorks(ctx context.Context) {
	c := x.fleet.Kit.Cluster(floodCluster)
	err := proc.Poll(ctx, time.Second, func(ctx context.Context) error {
		l, err := c.Dynamic().Resource(configMaps).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "faults=flood"})
		if err != nil {
			return err
		}
		if len(l.Items) < floodWorks {
			return fmt.Errorf("%d of %d flood ConfigMaps in %s", len(l.Items), floodWorks, floodCluster)
		}
		return nil
	})
	if err != nil {
		x.t.Fatal(err)
	}
}

// hubLog is the hub's log file.
func (x *fixture) hubLog() string {
	for _, p := range x.fleet.Processes() {
		if p.Role == fleet.RoleHub {
			return p.LogPath
		}
	}
	x.t.Fatal("no hub process")
	return ""
}

// flooder is the raw client flooding as floodCluster's agent: it
// reconnects whenever the hub ends its stream, after the wait the
// Goodbye asks for.
type flooder struct {
	x                       *fixture
	reports, bytes, streams atomic.Int64
	mu                      sync.Mutex     // guards ends
	ends                    map[string]int // why the hub ended its streams
}

// run floods until ctx ends.
func (f *flooder) run(ctx context.Context) {
	creds, err := agentTLS(f.x, floodCluster)
	if err != nil {
		f.x.t.Error(err)
		return
	}
	conn, err := grpc.NewClient(f.x.fleet.HubAddr, grpc.WithTransportCredentials(credentials.NewTLS(creds)))
	if err != nil {
		f.x.t.Errorf("dial hub: %v", err)
		return
	}
	defer conn.Close()
	client := agentv1.NewAgentServiceClient(conn)
	for ctx.Err() == nil {
		wait := f.stream(ctx, client)
		select {
		case <-ctx.Done():
		case <-time.After(max(wait, time.Second)):
		}
	}
}

// stream floods on one stream until the hub ends it or ctx ends, and
// returns the wait the hub's Goodbye asked for.
func (f *flooder) stream(ctx context.Context, client agentv1.AgentServiceClient) time.Duration {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := client.Connect(sctx)
	if err != nil {
		f.end("connect: " + err.Error())
		return 0
	}
	f.streams.Add(1)
	if err := s.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: &agentv1.Hello{AgentVersion: "faults-flood"}}}); err != nil {
		f.end("hello: " + err.Error())
		return 0
	}
	var works []*agentv1.WorkUpsert
	for {
		msg, err := s.Recv()
		if err != nil {
			f.end(err.Error())
			return 0
		}
		if g := msg.GetGoodbye(); g != nil {
			f.end("goodbye " + g.GetReason().String())
			return g.GetRetryAfter().AsDuration()
		}
		if u := msg.GetWorkUpsert(); u != nil {
			works = append(works, u)
		}
		if msg.GetSyncDone() != nil {
			break
		}
	}
	wait := make(chan time.Duration, 1)
	go func() { // the hub's messages, until it ends the stream
		for {
			msg, err := s.Recv()
			if g := msg.GetGoodbye(); g != nil {
				f.end("goodbye " + g.GetReason().String())
				wait <- g.GetRetryAfter().AsDuration()
				return
			}
			if err != nil {
				f.end(err.Error())
				wait <- 0
				cancel()
				return
			}
		}
	}()
	for _, u := range works {
		ack := &agentv1.Ack{WorkKey: u.GetWorkKey(), Version: u.GetVersion(), Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}
		if s.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: ack}}) != nil {
			return <-wait
		}
	}
	pad := strings.Repeat("x", floodStatusBytes)
	for i := 0; sctx.Err() == nil; i++ {
		for _, u := range works {
			status := fmt.Appendf(nil, `{"flood":%d,"pad":%q}`, i, pad)
			r := &agentv1.StatusReport{WorkKey: u.GetWorkKey(), Version: u.GetVersion(), Digest: fmt.Sprintf("flood-%d", i),
				Manifests: []*agentv1.ManifestStatus{{Identity: &agentv1.ObjectIdentity{Ordinal: 0}, StatusJson: status,
					Health: agentv1.Health_HEALTH_HEALTHY, Applied: true}}}
			if s.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: r}}) != nil {
				cancel()
				return <-wait
			}
			f.reports.Add(1)
			f.bytes.Add(int64(len(status)))
		}
	}
	s.CloseSend()
	select {
	case w := <-wait:
		return w
	case <-time.After(5 * time.Second):
		return 0
	}
}

// end counts one reason a stream ended.
func (f *flooder) end(why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ends == nil {
		f.ends = map[string]int{}
	}
	if len(why) > 80 {
		why = why[:80]
	}
	f.ends[why]++
}

// endings lists why the flood's streams ended, with counts.
func (f *flooder) endings() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var parts []string
	for why, n := range f.ends {
		parts = append(parts, fmt.Sprintf("%dx %s", n, why))
	}
	return strings.Join(parts, "; ")
}

// streamEnds counts the hub log's "agent stream ended" lines of clusters
// after offset from.
func streamEnds(path string, from int64, clusters []string) int {
	data, err := readFrom(path, from)
	if err != nil {
		return -1
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, "agent stream ended") {
			continue
		}
		for _, c := range clusters {
			if strings.Contains(line, "cluster="+c+" ") || strings.HasSuffix(line, "cluster="+c) || strings.Contains(line, `"cluster":"`+c+`"`) {
				n++
			}
		}
	}
	return n
}

// quotaAlarms are the lines of the embedded etcd's log and the hub's that
// say etcd's space quota was hit.
func quotaAlarms(hubDir, hubLog string) []string {
	var out []string
	for _, path := range []string{filepath.Join(hubDir, "etcd.log"), hubLog} {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if bytes.Contains(line, []byte("database space exceeded")) || bytes.Contains(line, []byte("NOSPACE")) {
				out = append(out, string(line[:min(len(line), 300)]))
			}
		}
	}
	return out
}

// fillTime is how long the flood would take to fill floodQuotaBytes from
// size at the rate it grew the database by growth in floodFor.
func fillTime(size, growth int64) string {
	if growth <= 0 {
		return "never"
	}
	return (time.Duration(float64(floodQuotaBytes-size) / float64(growth) * float64(floodFor))).Round(time.Second).String()
}

// fileSize is path's size, 0 when it cannot be read.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readFrom reads path from offset from on.
func readFrom(path string, from int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(from, 0); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(f); err != nil && !errors.Is(err, os.ErrClosed) {
		return nil, err
	}
	return b.Bytes(), nil
}
