package storewatch

import (
	"math"
	runtimemetrics "runtime/metrics"
	"time"
)

// schedWaitsMetric is the Go runtime's histogram of how long goroutines
// waited to run once runnable: in a process starved of CPU (its threads
// descheduled, or more work than its threads can run) it grows, while
// timers, whose goroutines run next, may still fire nearly on time.
const schedWaitsMetric = "/sched/latencies:seconds"

// schedWaits reads schedWaitsMetric between two moments. It is not safe
// for concurrent use.
type schedWaits struct {
	sample []runtimemetrics.Sample
	from   []uint64 // the histogram's counts at reset
}

func newSchedWaits() *schedWaits {
	return &schedWaits{sample: []runtimemetrics.Sample{{Name: schedWaitsMetric}}}
}

// reset starts a new period.
func (w *schedWaits) reset() {
	runtimemetrics.Read(w.sample)
	w.from = w.from[:0]
	if h := w.histogram(); h != nil {
		w.from = append(w.from, h.Counts...)
	}
}

// quantile returns the q-th quantile of the waits since reset: the lower
// bound of the bucket holding it (0 with no wait counted, or a runtime
// without the metric).
func (w *schedWaits) quantile(q float64) time.Duration {
	runtimemetrics.Read(w.sample)
	h := w.histogram()
	if h == nil || len(w.from) != len(h.Counts) {
		return 0
	}
	return waitQuantile(h.Buckets, w.from, h.Counts, q)
}

func (w *schedWaits) histogram() *runtimemetrics.Float64Histogram {
	if w.sample[0].Value.Kind() != runtimemetrics.KindFloat64Histogram {
		return nil
	}
	return w.sample[0].Value.Float64Histogram()
}

// waitQuantile is the q-th quantile of the counts added from from to to,
// over buckets (seconds; bucket i is [buckets[i], buckets[i+1])), as the
// lower bound of its bucket.
func waitQuantile(buckets []float64, from, to []uint64, q float64) time.Duration {
	var total uint64
	for i := range to {
		total += to[i] - from[i]
	}
	if total == 0 {
		return 0
	}
	rank := max(uint64(math.Ceil(q*float64(total))), 1)
	var seen uint64
	for i := range to {
		if seen += to[i] - from[i]; seen >= rank {
			if lower := buckets[i]; lower > 0 && !math.IsInf(lower, 0) {
				return time.Duration(lower * float64(time.Second))
			}
			return 0
		}
	}
	return 0
}
