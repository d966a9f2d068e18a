package syncstate

// Queue is a FIFO of keys in which each key appears at most once: pushing a
// key that is already queued replaces its value and keeps its place. It is
// the hub's per-agent outbound queue (newer work versions replace older
// ones). The zero value is empty and ready; it is not safe for concurrent
// use.
type Queue[T any] struct {
	entries map[string]entry[T] // queued keys
	order   []string            // queued keys in push order, from head
	head    int                 // index of the first live key in order
	seq     uint64              // sequence number of the last new key
}

type entry[T any] struct {
	value T
	seq   uint64
}

// compactMin is the number of popped slots below which order is never
// compacted; above it, order is compacted once half of it is popped.
const compactMin = 64

// Push queues value under key. If key is queued already, value replaces the
// queued one, which keeps its place, and Push reports true.
func (q *Queue[T]) Push(key string, value T) (replaced bool) {
	if e, ok := q.entries[key]; ok {
		e.value = value
		q.entries[key] = e
		return true
	}
	if q.entries == nil {
		q.entries = make(map[string]entry[T])
	}
	q.seq++
	q.entries[key] = entry[T]{value: value, seq: q.seq}
	q.order = append(q.order, key)
	return false
}

// Pop removes and returns the oldest queued key with its latest value, and
// its sequence number (as Seq returned when it was pushed); ok is false
// when the queue is empty.
func (q *Queue[T]) Pop() (key string, value T, seq uint64, ok bool) {
	if q.head == len(q.order) {
		return "", value, 0, false
	}
	key = q.order[q.head]
	q.order[q.head] = ""
	q.head++
	e := q.entries[key]
	delete(q.entries, key)
	if q.head == len(q.order) {
		// Emptied: the map and the slice would keep the room of the most
		// keys they held (a thousand works sent to each of a thousand
		// agents, then nothing until the next change).
		q.entries, q.order, q.head = nil, nil, 0
	} else if q.head > compactMin && q.head*2 > len(q.order) {
		q.order = append(q.order[:0], q.order[q.head:]...)
		q.head = 0
	}
	return key, e.value, e.seq, true
}

// Peek returns the sequence number of the oldest queued key; ok is false
// when the queue is empty.
func (q *Queue[T]) Peek() (seq uint64, ok bool) {
	if q.head == len(q.order) {
		return 0, false
	}
	return q.entries[q.order[q.head]].seq, true
}

// Seq returns the sequence number given to the last newly queued key: every
// key queued so far has a number at most Seq, every later one a greater one.
func (q *Queue[T]) Seq() uint64 { return q.seq }

// Len returns the number of queued keys.
func (q *Queue[T]) Len() int { return len(q.order) - q.head }
