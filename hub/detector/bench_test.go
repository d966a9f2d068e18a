package detector

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tetherproj/tether/hub/store"
)

// BenchmarkNewTemplates is the detector's time to bind 200 new templates
// stored at once while other writers keep the store's log fsyncs busy, as
// the aggregator's status writes do on a busy hub: the binding writes go
// to the store together (writes.go); one after the other, each cost a
// store round.
func BenchmarkNewTemplates(b *testing.B) {
	e := newEnv(b)
	e.put(ppObj("bench", "pp", 0, deploys(selAll("apps/v1", "Deployment"))))
	e.start()
	ctx, cancel := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				_, _ = e.st.Put(ctx, fmt.Sprintf("/tether/test/busy/%d/%d", w, i%100), bytes.Repeat([]byte("x"), 16<<10))
			}
		})
	}
	defer func() { cancel(); wg.Wait() }()
	const templates = 200
	b.ResetTimer()
	for i := range b.N {
		for half := range 2 { // two transactions: etcd's limit is 128 operations
			var puts []clientv3.Op
			for j := half * templates / 2; j < (half+1)*templates/2; j++ {
				name := fmt.Sprintf("web-%d-%03d", i, j)
				key := store.ObjectKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "bench", Name: name})
				puts = append(puts, clientv3.OpPut(key, deployJSON("bench", name, 3, `{}`)))
			}
			if _, err := e.st.Client().Txn(e.ctx).Then(puts...).Commit(); err != nil {
				b.Fatal(err)
			}
		}
		e.waitFor("bindings", func() bool {
			n, err := e.st.Count(e.ctx, store.BindingsPrefix)
			return err == nil && n == int64(templates*(i+1)+1) // and the namespace's
		})
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/200-templates")
}
