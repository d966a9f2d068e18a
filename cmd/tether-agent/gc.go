package main

// defaultGCPercent is the agent's garbage collection target (Go's GOGC)
// unless --gc-percent or $GOGC sets one: a collection starts once the heap
// has grown by 50% of what the last one left live. Go's default is 100.
// The agent's live heap is small (some 3–6 MB with 100 works) and its
// resident peaks follow short bursts (a rollout's watch events, status
// reports, a heartbeat) that set the next goal; 50 lowers the heap's part
// of the peak by a quarter for some twice as many collections, each well
// under a millisecond of the agent's CPU at this heap size (issue 16).
const defaultGCPercent = 50
