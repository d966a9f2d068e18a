package agentapi

import (
	"context"
	"fmt"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/authority"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/internal/grpcbuf"
	"github.com/tetherproj/tether/internal/protocol"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Defaults of Config, sent to agents in Settings (the heartbeat interval
// and lease duration are internal/protocol's).
const (
	// DefaultStatusMinInterval is the shortest interval between two status
	// reports of one work.
	DefaultStatusMinInterval = 2 * time.Second
	// DefaultMaxMessageBytes is the largest agent message the hub accepts
	// (4 MiB, gRPC's own default): a status report of a work of many large
	// objects fits.
	DefaultMaxMessageBytes = 4 << 20
	// DefaultMaxWorks is the most works the hub serves to one cluster
	// (tether-hub --max-works-per-cluster); the scheduler places no new
	// workload on a cluster that has as many.
	DefaultMaxWorks = 10000
	// DefaultHelloTimeout bounds the wait for Hello after a stream opens.
	DefaultHelloTimeout = 30 * time.Second
	// DefaultMaxHellosInProgress is how many streams read and act on their
	// Hello at once: a fleet reconnecting to a restarted hub all at once
	// would otherwise decode every Hello (a thousand works each: some
	// 450 KB) before the first is done with; 256 of those are 115 MB.
	// Acting on one includes a store read (Authority.ObserveAgent), so
	// fewer places make a large fleet's resync wait on them: 10,000
	// agents took 65 s to resync after a restart with 64, 50 s with 256,
	// 46 s with no bound.
	DefaultMaxHellosInProgress = 256
	// DefaultHandshakeTimeout bounds a new connection's TLS handshake and
	// HTTP/2 setup (gRPC's own default is 120 s): long enough for a slow
	// link, short enough that silent connections cannot pile up.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultMaxConnectionIdle is how long a connection with no call in
	// progress stays open. Agents always have their stream open; a client
	// reconnects when it next calls.
	DefaultMaxConnectionIdle = 5 * time.Minute
	// DefaultMaxConcurrentStreams is the most calls one connection may have
	// in progress at once (HTTP/2's recommended minimum; gRPC's own default
	// is unbounded): an agent needs one stream and a few calls, a client a
	// few watches.
	DefaultMaxConcurrentStreams = 100
	// DefaultMaxStreamsPerCluster is the most Connect calls one cluster has
	// in progress at once, with or without Hello, over all its
	// connections: its live stream and a few reconnects racing it.
	DefaultMaxStreamsPerCluster = 4
	// DefaultStreamOpenRate is how many streams per second one cluster may
	// open, with bursts of DefaultStreamOpenBurst: an agent reconnects
	// after 1 s at the soonest and backs off to 30 s, so a flapping link
	// opens a few a minute; one a second sustained, 40 at once, stops a
	// tight loop (hundreds a second) and leaves room for a client that
	// tests the hub with many short streams of one cluster (test/security).
	DefaultStreamOpenRate  = 1
	DefaultStreamOpenBurst = 40
	// DefaultRegistrationRate is how many registrations per second the hub
	// serves from one source address, with bursts of
	// DefaultRegistrationBurst: a site installing a few clusters at once
	// goes through, one address cannot use up the total.
	DefaultRegistrationRate  = 1
	DefaultRegistrationBurst = 10
	// DefaultRegistrationTotalRate is how many registrations per second the
	// hub serves from all sources together, with bursts of
	// DefaultRegistrationTotalBurst: enough for a fleet installed at once,
	// and a bound on CSR signing and store writes.
	DefaultRegistrationTotalRate  = 10
	DefaultRegistrationTotalBurst = 50
)

// streamWindow is the flow-control window of every stream the hub
// receives, bytes: static, gRPC's initial 64 KiB, not grown by its
// bandwidth estimate (which may grow it to megabytes per connection).
// Data a stream has not read yet stays within it: a thousand agents that
// sent their Hello before the hub could read them buffered over 200 MB.
// What agents send is small and frequent; a client uploading over a long
// path moves at most this much per round trip (640 KB/s at 100 ms).
const streamWindow = 64 << 10

// readBufferSize is gRPC's read buffer per connection, bytes: none. gRPC's
// default (32 KiB) would stay pinned by every connection for its life, as
// gRPC pools read buffers only for connections it can poll, and a TLS
// connection is not one: 320 MB for 10,000 agents. TLS already reads a
// whole record at a time, so gRPC reads its frames from the record TLS
// holds.
const readBufferSize = 0

// Config configures the service. Zero durations and sizes mean the defaults.
type Config struct {
	// HubIdentity is this hub's identity (store.Identity); required.
	HubIdentity string
	// HubVersion is sent in Welcome.
	HubVersion string
	// HeartbeatInterval, LeaseDuration and StatusMinInterval are sent to
	// agents in Settings.
	HeartbeatInterval time.Duration
	LeaseDuration     time.Duration
	StatusMinInterval time.Duration
	// MaxMessageBytes is the largest message an agent may send, bytes.
	MaxMessageBytes int
	// MaxWorks is the most works the hub serves to one cluster; the works
	// over it are withheld (neither sent nor deleted), never a reason to
	// refuse the stream.
	MaxWorks int
	// HelloTimeout bounds the wait for an agent's Hello.
	HelloTimeout time.Duration
	// CatchUpTimeout bounds the wait for the works to reach the store
	// revision an agent has seen (default DefaultCatchUpTimeout).
	CatchUpTimeout time.Duration
	// MaxHellosInProgress bounds the streams that read and act on their
	// Hello at once (admitHello); zero: DefaultMaxHellosInProgress.
	MaxHellosInProgress int
	// HandshakeTimeout bounds a new connection's TLS handshake and HTTP/2
	// setup; a connection that has not finished them by then is closed.
	HandshakeTimeout time.Duration
	// MaxConnectionIdle closes (GOAWAY) a connection that has had no call
	// in progress for that long. An agent's stream is one call for as long
	// as it lives, so only connections that make no call at all go.
	MaxConnectionIdle time.Duration
	// MaxConcurrentStreams is the most calls one connection may have in
	// progress at once; a client waits for a free one.
	MaxConcurrentStreams uint32
	// MaxStreamsPerCluster is the most Connect calls one cluster has in
	// progress at once; past it the oldest ends (superseded).
	MaxStreamsPerCluster int
	// StreamOpenRate (per second) and StreamOpenBurst bound how often one
	// cluster opens a stream; past them Connect ends with Goodbye
	// LIMIT_EXCEEDED and a retry-after.
	StreamOpenRate  float64
	StreamOpenBurst int
	// Registry registers agents (Register) and says whether an agent's
	// certificate is still valid (every Connect, and Recheck); hub/membership
	// implements it. Nil: Register answers Unimplemented and every agent
	// certificate of the hub CA is accepted.
	Registry Registry
	// RegistrationRate (per second) and RegistrationBurst bound Register
	// from one source address (the TCP peer's IP).
	RegistrationRate  float64
	RegistrationBurst int
	// RegistrationTotalRate (per second) and RegistrationTotalBurst bound
	// Register from all sources together.
	RegistrationTotalRate  float64
	RegistrationTotalBurst int
	// MessageRates bounds each kind of message one stream may send; zero
	// fields mean the defaults (MessageRates).
	MessageRates MessageRates
	// Counts tallies refused status reports (guard.KindRefused) and
	// streams ended past a bound (KindStreamLimit); nil counts nothing.
	Counts *guard.Counts
	// Authority says whether the hub may cause deletes and checks each
	// agent's Hello against the store (hub/authority); nil: always
	// authoritative, nothing checked.
	Authority Authority
	// Customizations are the user's interpreter customizations, sent to
	// every agent (hub/customizations' Watcher); nil sends none.
	Customizations Customizations
	// ResourceModels are the clusters' resource models, sent to each
	// agent in Settings (hub/membership's Models); nil sends none.
	ResourceModels ResourceModels
}

// ResourceModels is where the service reads a cluster's resource models,
// by which its agent grades nodes for ResourceSummary.allocatable_modelings.
type ResourceModels interface {
	// ResourceModels returns the cluster's models (nil: none) and a
	// channel closed once they may have changed.
	ResourceModels(cluster string) ([]*agentv1.ResourceModel, <-chan struct{})
}

// Customizations is where the service reads the set of interpreter
// customizations agents are to hold.
type Customizations interface {
	// Customizations returns the current set, nil until the stored set is
	// loaded, and a channel closed once a newer set replaces it.
	Customizations() (*agentv1.Customizations, <-chan struct{})
}

// Authority is what the service needs from hub/authority.
type Authority interface {
	// Authoritative is false, with the reason, while the hub must not
	// cause deletes (its store lost or regressed data).
	Authoritative() (bool, string)
	// ObserveAgent is told, for each Hello, what the agent holds and the
	// store revision it saw; one that saw newer than the store has, or
	// holds works for a cluster the store does not know, makes the hub
	// not authoritative.
	ObserveAgent(ctx context.Context, seen authority.Lineage)
	// Epoch is the store's epoch, sent in Welcome.
	Epoch() string
	// Adoption is the operator's latest adoption of the fleet, nil for
	// none, sent in Welcome.
	Adoption() *authority.Adoption
}

func (c Config) withDefaults() (Config, error) {
	if c.HubIdentity == "" {
		return c, fmt.Errorf("agentapi: config without a hub identity")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.HeartbeatInterval, protocol.HeartbeatInterval)
	def(&c.LeaseDuration, protocol.LeaseDuration)
	def(&c.StatusMinInterval, DefaultStatusMinInterval)
	def(&c.HelloTimeout, DefaultHelloTimeout)
	def(&c.CatchUpTimeout, DefaultCatchUpTimeout)
	if c.MaxHellosInProgress <= 0 {
		c.MaxHellosInProgress = DefaultMaxHellosInProgress
	}
	def(&c.HandshakeTimeout, DefaultHandshakeTimeout)
	def(&c.MaxConnectionIdle, DefaultMaxConnectionIdle)
	if c.MaxStreamsPerCluster <= 0 {
		c.MaxStreamsPerCluster = DefaultMaxStreamsPerCluster
	}
	if c.MaxConcurrentStreams == 0 {
		c.MaxConcurrentStreams = DefaultMaxConcurrentStreams
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.MaxWorks <= 0 {
		c.MaxWorks = DefaultMaxWorks
	}
	c.MessageRates = c.MessageRates.withDefaults(c.MaxWorks, c.HeartbeatInterval)
	if c.StreamOpenRate <= 0 {
		c.StreamOpenRate = DefaultStreamOpenRate
	}
	if c.StreamOpenBurst <= 0 {
		c.StreamOpenBurst = DefaultStreamOpenBurst
	}
	if c.RegistrationRate <= 0 {
		c.RegistrationRate = DefaultRegistrationRate
	}
	if c.RegistrationBurst <= 0 {
		c.RegistrationBurst = DefaultRegistrationBurst
	}
	if c.RegistrationTotalRate <= 0 {
		c.RegistrationTotalRate = DefaultRegistrationTotalRate
	}
	if c.RegistrationTotalBurst <= 0 {
		c.RegistrationTotalBurst = DefaultRegistrationTotalBurst
	}
	return c, nil
}

// ServerOptions returns the gRPC server options the service needs: the
// receive limit of cfg, its handshake, idle and per-connection stream
// bounds, keepalive, and the codec that encodes a work once for all the
// streams that send it (wireCodec). They apply to the whole gRPC server.
func ServerOptions(cfg Config) []grpc.ServerOption {
	max := cfg.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	handshake, idle, streams := cfg.HandshakeTimeout, cfg.MaxConnectionIdle, cfg.MaxConcurrentStreams
	if streams == 0 {
		streams = DefaultMaxConcurrentStreams
	}
	if handshake <= 0 {
		handshake = DefaultHandshakeTimeout
	}
	if idle <= 0 {
		idle = DefaultMaxConnectionIdle
	}
	return []grpc.ServerOption{
		newWireCodec().option(),
		grpcbuf.ServerOption(),
		grpc.ReadBufferSize(readBufferSize),
		grpc.StaticStreamWindowSize(streamWindow),
		grpc.MaxRecvMsgSize(max),
		grpc.ConnectionTimeout(handshake),
		grpc.MaxConcurrentStreams(streams),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: protocol.KeepaliveTime, Timeout: protocol.KeepaliveTimeout, MaxConnectionIdle: idle}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: protocol.KeepaliveMinTime, PermitWithoutStream: true}),
	}
}

// welcome is the hub's first message on every stream, with the cluster's
// resource models.
func (c Config) welcome(models []*agentv1.ResourceModel) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_Welcome{Welcome: &agentv1.Welcome{
		HubIdentity: c.HubIdentity,
		HubVersion:  c.HubVersion,
		Settings:    c.settings(models),
	}}}
}

// settings are the stream's settings, with the cluster's resource models.
func (c Config) settings(models []*agentv1.ResourceModel) *agentv1.Settings {
	return &agentv1.Settings{
		HeartbeatInterval: durationpb.New(c.HeartbeatInterval),
		LeaseDuration:     durationpb.New(c.LeaseDuration),
		StatusMinInterval: durationpb.New(c.StatusMinInterval),
		Limits: &agentv1.Limits{
			MaxMessageBytes: int64(c.MaxMessageBytes),
			MaxWorks:        int32(c.MaxWorks),
		},
		ResourceModels: models,
	}
}
