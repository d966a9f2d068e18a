package placement

import (
	"container/heap"
	"hash/fnv"
	"sort"
)

// party is one cluster taking part in a Webster apportionment: votes is
// its weight, seats the replicas it has been given so far.
type party struct {
	name  string
	votes int64
	seats int32
}

// seatQueue is a max-heap of parties ordered by Webster priority
// votes/(2*seats+1), ties broken by tieBreak.
type seatQueue struct {
	parties []party
	// nameDesc reverses the name order of the final tie-break (odd UID hash).
	nameDesc bool
}

func (q *seatQueue) Len() int      { return len(q.parties) }
func (q *seatQueue) Swap(i, j int) { q.parties[i], q.parties[j] = q.parties[j], q.parties[i] }
func (q *seatQueue) Push(x any)    { q.parties = append(q.parties, x.(party)) }
func (q *seatQueue) Pop() any {
	last := q.parties[len(q.parties)-1]
	q.parties = q.parties[:len(q.parties)-1]
	return last
}

// Less compares priorities as float64, exactly as Karmada does: two
// different ratios that round to the same float64 are a tie there too.
func (q *seatQueue) Less(i, j int) bool {
	a, b := q.parties[i], q.parties[j]
	pa := float64(a.votes) / float64(2*a.seats+1)
	pb := float64(b.votes) / float64(2*b.seats+1)
	if pa != pb {
		return pa > pb
	}
	if a.seats != b.seats {
		return a.seats < b.seats
	}
	if q.nameDesc {
		return a.name > b.name
	}
	return a.name < b.name
}

// webster divides seats among parties by the Webster (Sainte-Laguë)
// method: each seat goes to the party with the highest votes/(2*seats+1).
// Exact ties go to the party with fewer seats, then by name: ascending when
// the workload UID is empty or its FNV-32a hash is even, descending when
// odd, so that equal workloads do not all round towards the same cluster.
// The result lists every party (zero seats included) sorted by name.
// Parties must have unique names.
func webster(seats int32, parties []party, uid string) []party {
	q := &seatQueue{parties: parties, nameDesc: uidHashOdd(uid)}
	if len(parties) == 0 {
		return nil
	}
	heap.Init(q)
	for ; seats > 0; seats-- {
		q.parties[0].seats++
		heap.Fix(q, 0)
	}
	sort.Slice(q.parties, func(i, j int) bool { return q.parties[i].name < q.parties[j].name })
	return q.parties
}

// uidHashOdd reports whether the FNV-32a hash of uid is odd; an empty UID
// counts as even.
func uidHashOdd(uid string) bool {
	if uid == "" {
		return false
	}
	h := fnv.New32a()
	h.Write([]byte(uid))
	return h.Sum32()%2 == 1
}
