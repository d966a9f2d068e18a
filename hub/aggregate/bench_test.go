package aggregate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/liveness"
)

// BenchmarkHeldMemory reports the heap a single hub (Config.Local) keeps
// per held work, B/work: one ack and one status report of a Deployment
// each, decoded from their wire form as the gRPC server does, for works
// Duplicated to every cluster (one version and digest per work).
func BenchmarkHeldMemory(b *testing.B) {
	const clusters, works = 100, 500
	acks, reports := wireMessages(b, works)
	leases := liveness.New(liveness.Config{LeaseDuration: 40 * time.Second})
	ctx := context.Background()
	var perWork float64
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		a := New(nil, nil, leases, Config{Local: true, Seen: func() int64 { return 1 }}, hclog.NewNullLogger())
		for c := range clusters {
			cluster := fmt.Sprintf("member-%04d", c)
			for w := range works {
				ack, report := &agentv1.Ack{}, &agentv1.StatusReport{}
				if err := proto.Unmarshal(acks[w], ack); err != nil {
					b.Fatal(err)
				}
				if err := proto.Unmarshal(reports[w], report); err != nil {
					b.Fatal(err)
				}
				if err := a.Ack(ctx, cluster, ack); err != nil {
					b.Fatal(err)
				}
				if err := a.Report(ctx, cluster, report); err != nil {
					b.Fatal(err)
				}
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(a)
		perWork = float64(after.HeapAlloc-before.HeapAlloc) / (clusters * works)
	}
	b.ReportMetric(perWork, "B/work")
}

// wireMessages returns the encoded ack and status report of n
// Deployments' works.
func wireMessages(b *testing.B, n int) (acks, reports [][]byte) {
	for i := range n {
		name := fmt.Sprintf("web-%04d", i)
		key := "apps/Deployment/bench/" + name
		sum := sha256.Sum256([]byte(key))
		version := hex.EncodeToString(sum[:])
		ack := &agentv1.Ack{WorkKey: key, Version: version, Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}
		m := manifest(name, agentv1.Health_HEALTH_HEALTHY, true, memberStatus(3))
		m.Identity.Namespace = "bench"
		report := &agentv1.StatusReport{WorkKey: key, Version: version, Digest: version[:32], Manifests: []*agentv1.ManifestStatus{m}}
		acks, reports = append(acks, wire(b, ack)), append(reports, wire(b, report))
	}
	return acks, reports
}

func wire(b *testing.B, m proto.Message) []byte {
	data, err := proto.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
