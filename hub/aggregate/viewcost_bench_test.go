package aggregate

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/hub/view"
)

// BenchmarkReportsInView measures what holding the relayed records in a
// replica's view would cost, the measurement behind keeping the relay's
// own follower (doc.go, "Relayed records and the view"): B/record is the
// heap a view holding /tether/reports/ keeps per record (the Object, its
// index entry and the decoded record), stored-B/record the size of one
// record, for one ack and one status report of a Deployment, as
// BenchmarkHeldMemory's.
func BenchmarkReportsInView(b *testing.B) {
	const clusters, works = 20, 250
	st := etcdtest.Embedded(b)
	ctx := context.Background()
	acks, reports := wireMessages(b, works)
	var stored int
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
			data, err := encodeHeld(heldOf(Observation{Latest: ack.Version, Ack: ack, Report: report}), ack.WorkKey, "replica-a")
			if err != nil {
				b.Fatal(err)
			}
			stored = len(data)
			if _, err := st.Put(ctx, store.ReportKey(cluster, ack.WorkKey), data); err != nil {
				b.Fatal(err)
			}
		}
	}
	decode := func(_ string, value []byte) (any, error) { return decodeHeld(value) }
	var perRecord float64
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v, err := view.New(st, []view.Prefix{{Prefix: store.ReportsPrefix, Decode: decode}}, hclog.NewNullLogger())
		if err != nil {
			b.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- v.Run(rctx) }()
		<-v.Synced()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if n := len(v.Snapshot(store.ReportsPrefix).Objects); n != clusters*works {
			b.Fatalf("view holds %d records; want %d", n, clusters*works)
		}
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		perRecord = float64(after.HeapAlloc-before.HeapAlloc) / (clusters * works)
	}
	b.ReportMetric(perRecord, "B/record")
	b.ReportMetric(float64(stored), "stored-B/record")
}
