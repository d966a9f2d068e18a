package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// HubPollInterval is how often the templates' aggregated status is read
// from the hub during a phase that waits for it (see hubPoll); it bounds
// the resolution of the hub's milestones.
const HubPollInterval = 200 * time.Millisecond

// hubListPage is the page size of those reads: the hub's largest.
const hubListPage = 5000

// watches runs the event sources of a Tracker until stopped.
type watches struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error // the first watch failure
}

// stop ends every watch and returns the first failure.
func (w *watches) stop() error {
	w.cancel()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *watches) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// memberClient is one member cluster as the watches and the direct
// writer see it.
type memberClient struct {
	name string
	cs   kubernetes.Interface
}

// startWatches opens, before it returns, a watch of the benchmark's
// Deployments in every member (all namespaces), and starts reading the
// templates' status from the hub (hubPoll), feeding tr.
func startWatches(ctx context.Context, tr *Tracker, members []memberClient, hub hubv1.ObjectServiceClient) (*watches, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &watches{cancel: cancel}
	selector := labelKey + "=" + labelValue
	for _, m := range members {
		list, err := m.cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: selector, Limit: 1})
		if err != nil {
			w.stop()
			return nil, fmt.Errorf("list deployments of %s: %w", m.name, err)
		}
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				opts.LabelSelector = selector
				return m.cs.AppsV1().Deployments("").Watch(ctx, opts)
			},
		})
		if err != nil {
			w.stop()
			return nil, fmt.Errorf("watch deployments of %s: %w", m.name, err)
		}
		w.wg.Go(func() { w.member(ctx, tr, m.name, rw) })
	}
	w.wg.Go(func() { w.hubPoll(ctx, tr, hub) })
	return w, nil
}

// member feeds one member's events to tr.
func (w *watches) member(ctx context.Context, tr *Tracker, name string, rw *watchtools.RetryWatcher) {
	defer rw.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-rw.ResultChan():
			if !ok {
				if ctx.Err() == nil {
					w.fail(fmt.Errorf("watch of %s ended", name))
				}
				return
			}
			d, isDep := ev.Object.(*appsv1.Deployment)
			if !isDep {
				if ev.Type == watch.Error {
					w.fail(fmt.Errorf("watch of %s: %v", name, ev.Object))
					return
				}
				continue
			}
			tr.Observe(name, d, ev.Type == watch.Deleted, time.Now())
		}
	}
}

// hubPoll lists the templates, with their aggregated status, every
// HubPollInterval while the tracker's phase has milestones on the hub, and
// feeds them to tr. The hub's Watch cannot serve here: it streams changes
// of the stored template, and the aggregated status lives on the binding,
// so a status change sends no event (only Get and List merge it in).
func (w *watches) hubPoll(ctx context.Context, tr *Tracker, hub hubv1.ObjectServiceClient) {
	tick := time.NewTicker(HubPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !tr.wantsHub() {
			continue
		}
		if err := listTemplates(ctx, tr, hub); err != nil && ctx.Err() == nil {
			w.fail(err)
			return
		}
	}
}

// listTemplates lists the benchmark's templates once, every page, and
// feeds each to tr.
func listTemplates(ctx context.Context, tr *Tracker, hub hubv1.ObjectServiceClient) error {
	token := ""
	for {
		resp, err := hub.List(ctx, &hubv1.ListRequest{
			ApiVersion: "apps/v1", Kind: "Deployment", Namespace: Namespace,
			LabelSelector: labelKey + "=" + labelValue, PageSize: hubListPage, PageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list templates: %w", err)
		}
		at := time.Now()
		for _, obj := range resp.GetObjects() {
			var d appsv1.Deployment
			if err := json.Unmarshal(obj.GetObjectJson(), &d); err != nil {
				return fmt.Errorf("decode template %s: %w", obj.GetRef().GetName(), err)
			}
			tr.Observe(HubSource, &d, false, at)
		}
		if token = resp.GetNextPageToken(); token == "" {
			return nil
		}
	}
}
