package load

// The driver and its workers talk over one TCP connection per worker on
// 127.0.0.1, JSON lines each way: the driver sends Commands, a worker
// sends Events. Times are Unix nanoseconds of the shared machine clock.

// Event kinds, worker → driver.
const (
	// EventReady: the worker has enrolled its agents and started them.
	EventReady = "ready"
	// EventSync: an agent's stream reached SyncDone; Upserts and Bytes
	// are what the hub sent on it before.
	EventSync = "sync"
	// EventGen: an agent holds the expected count of works of Gen.
	EventGen = "gen"
	// EventStats answers CmdStats.
	EventStats = "stats"
	// EventError: an agent's client ended with an error.
	EventError = "error"
)

// Event is one line a worker sends.
type Event struct {
	Kind    string `json:"kind"`
	Worker  int    `json:"worker,omitempty"`
	Agent   int    `json:"agent,omitempty"`
	At      int64  `json:"at,omitempty"`
	Gen     int    `json:"gen,omitempty"`
	Upserts int64  `json:"upserts,omitempty"`
	Bytes   int64  `json:"bytes,omitempty"`
	// Held is the works all the worker's agents hold (EventStats).
	Held    int64  `json:"held,omitempty"`
	Message string `json:"message,omitempty"`
}

// Command ops, driver → worker.
const (
	// CmdExpect: every agent reports EventGen once it holds Count works
	// of Gen.
	CmdExpect = "expect"
	// CmdRestart: Fraction of the agents end their client and start a new
	// one (a restarted agent: Hello with what it holds) after a delay
	// drawn in [0, JitterMS). With Forget, each starts with an empty state
	// and member (a reinstalled agent: Hello with nothing held).
	CmdRestart = "restart"
	// CmdFlap: Fraction of the agents go down for DownMS and up for UpMS,
	// over and over, until CmdStopFlap.
	CmdFlap     = "flap"
	CmdStopFlap = "stop-flap"
	// CmdStats: the worker answers with EventStats.
	CmdStats = "stats"
)

// Command is one line the driver sends.
type Command struct {
	Op       string  `json:"op"`
	Gen      int     `json:"gen,omitempty"`
	Count    int     `json:"count,omitempty"`
	Fraction float64 `json:"fraction,omitempty"`
	JitterMS int64   `json:"jitterMs,omitempty"`
	DownMS   int64   `json:"downMs,omitempty"`
	UpMS     int64   `json:"upMs,omitempty"`
	Forget   bool    `json:"forget,omitempty"`
}
