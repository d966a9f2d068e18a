package hubclient

// digestPacer decides, tick by tick, when the state writer writes the
// status digests: at the first tick without a new report, or after max
// ticks of reports that kept coming. The digests are rewritten whole, so
// writing them at every tick of a burst (a thousand works placed at once,
// each reported applied, then healthy) costs the agent CPU and its disk a
// write of every digest per tick, for a record that is only an
// optimization: a digest lost in a crash costs one StatusRequest. Close
// writes them whatever the pace.
type digestPacer struct {
	max  int    // the most ticks a change waits while reports go on
	seen uint64 // the count of changes at the last tick
	busy int    // ticks in a row that saw new changes
}

// due takes the count of digest changes at a tick and reports whether to
// write the digests now (the store skips them when nothing changed since
// they were last taken).
func (p *digestPacer) due(changes uint64) bool {
	quiet := changes == p.seen
	p.seen = changes
	if quiet {
		p.busy = 0
		return true
	}
	p.busy++
	if p.busy >= p.max {
		p.busy = 0
		return true
	}
	return false
}
