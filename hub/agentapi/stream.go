package agentapi

import (
	"context"
	"crypto/x509"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/syncstate"
)

// stream is the state of one Connect call, shared by its sending,
// receiving and following goroutines.
type stream struct {
	cluster string
	log     hclog.Logger
	wake    chan struct{} // buffered, 1: something to send, or the stream ends
	ready   chan struct{} // closed once session is set: the receiver may go on
	done    chan struct{} // closed when err is first set
	// messages bounds what the agent sends, per kind; only the receiver
	// uses it.
	messages *messageLimits

	mu      sync.Mutex         // guards the fields below
	session *syncstate.Session // nil until the initial difference is known
	limit   *limit             // set with session: the works withheld
	// withheld is how many works the last log line reported withheld.
	withheld int
	control  []*agentv1.HubMessage // sent before any work message: Welcome, replies
	err      error                 // why the stream ends; nil while it runs
	// cert is the agent's certificate: the verified client certificate,
	// then the one each renewal on the stream issued (the agent holds its
	// key and will reconnect with it).
	cert *x509.Certificate
	// renewed is when the stream's last renewal was served (renewal.go).
	renewed time.Time
}

func newStream(cluster string, cfg Config, log hclog.Logger) *stream {
	return &stream{
		cluster:  cluster,
		log:      log,
		wake:     make(chan struct{}, 1),
		ready:    make(chan struct{}),
		done:     make(chan struct{}),
		messages: newMessageLimits(cluster, cfg.MessageRates, cfg.HeartbeatInterval),
	}
}

func (st *stream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// end makes the stream end with err (the first one given wins): the sender
// says Goodbye if err calls for one, and Connect returns err's status.
func (st *stream) end(err error) {
	st.mu.Lock()
	first := st.err == nil
	if first {
		st.err = err
	}
	st.mu.Unlock()
	if first {
		close(st.done)
		st.signal()
	}
}

// certificate returns the agent's current certificate (nil: none).
func (st *stream) certificate() *x509.Certificate {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cert
}

// setCertificate makes cert the agent's current certificate.
func (st *stream) setCertificate(cert *x509.Certificate) {
	st.mu.Lock()
	st.cert = cert
	st.mu.Unlock()
}

// begin sets the session and its limit, queues control (Welcome, then the
// customizations) before it, and lets the receiver go on.
func (st *stream) begin(control []*agentv1.HubMessage, s *syncstate.Session, lim *limit) {
	st.mu.Lock()
	st.session, st.limit = s, lim
	st.control = append(st.control, control...)
	st.mu.Unlock()
	st.reportWithheld()
	close(st.ready)
	st.signal()
}

// reply queues msg ahead of work messages.
func (st *stream) reply(msg *agentv1.HubMessage) {
	st.mu.Lock()
	st.control = append(st.control, msg)
	st.mu.Unlock()
	st.signal()
}

// next returns the next message to send, and the error to end with after
// sending it; both nil when there is nothing to send now.
func (st *stream) next() (*agentv1.HubMessage, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.err != nil {
		return goodbyeFor(st.err), st.err
	}
	if len(st.control) > 0 {
		msg := st.control[0]
		st.control = st.control[1:]
		return msg, nil
	}
	if st.session == nil {
		return nil, nil
	}
	return st.session.Next(), nil
}

// sendLoop sends what next gives until the stream ends, and returns why.
// Between messages it waits for more and, when f is not nil, follows the
// cluster's works and the stream's settings (following).
func (st *stream) sendLoop(ctx context.Context, send func(*agentv1.HubMessage) error, f *following) error {
	var worksChanged, modelsChanged, customChanged <-chan struct{} // nil without f: never ready
	for {
		if f != nil {
			f.pollWorks(ctx, st)
		}
		msg, end := st.next()
		if msg != nil {
			if err := send(msg); err != nil {
				return err
			}
		}
		if end != nil {
			return end
		}
		if msg != nil {
			continue
		}
		if f != nil {
			worksChanged, modelsChanged, customChanged = f.worksChanged, f.modelsChanged, f.customChanged
		}
		select {
		case <-st.wake:
		case <-worksChanged:
			f.nextWorks(ctx, st)
		case <-modelsChanged:
			f.nextModels(st)
		case <-customChanged:
			f.nextCustomizations(st)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// apply queues changes of the cluster's works, less those its limit
// withholds.
func (st *stream) apply(changes []WorkChange) {
	st.mu.Lock()
	st.session.Apply(st.limit.filter(st.session, changes)...)
	st.mu.Unlock()
	st.reportWithheld()
	st.signal()
}

// reportWithheld logs how many works the limit withholds when that number
// changed since the last report.
func (st *stream) reportWithheld() {
	st.mu.Lock()
	n, served, max, was := len(st.limit.withheld), st.session.Works(), st.limit.max, st.withheld
	st.withheld = n
	st.mu.Unlock()
	switch {
	case n > 0 && n != was:
		st.log.Warn("works withheld: the cluster has more works than the hub serves to one cluster; they are neither sent nor deleted until there is room",
			"withheld", n, "served", served, "max_works", max)
	case n == 0 && was > 0:
		st.log.Info("no work withheld any more", "served", served, "max_works", max)
	}
}

// accept runs check (AcceptAck or AcceptStatus) on the session.
func (st *stream) accept(check func(*syncstate.Session) bool) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return check(st.session)
}
