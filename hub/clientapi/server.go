package clientapi

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/api/codec"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/revocation"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
)

// Tuned defaults of Config.
const (
	// DefaultMaxObjectBytes is the largest object Apply stores, measured as
	// its stored JSON: 1.5 MiB, etcd's default request limit, so that an
	// object always fits one etcd write with room for the transaction.
	DefaultMaxObjectBytes = 3 << 19
	// DefaultListPageSize is how many objects a List page holds when the
	// request names no page size.
	DefaultListPageSize = 500
	// DefaultWatchBufferEvents is how many events a Watch holds for a
	// client that reads more slowly than they come; past it the hub stops
	// reading etcd for that watch until the client catches up (lagQueue).
	// It is four of etcd's largest transactions (128 operations), so that
	// bursts pass without a pause.
	DefaultWatchBufferEvents = 512
	// DefaultWatchBufferBytes bounds the same events in bytes of stored
	// keys and values (4 MiB, a few of the largest objects), so that a
	// stalled watcher costs the hub at most about this much.
	DefaultWatchBufferBytes = 4 << 20
	// DefaultWatchStall is how long a Watch whose buffer is full waits for
	// its client to take an event before it ends the watch: the client
	// then gets RESOURCE_EXHAUSTED once it reads again, and watches again
	// from the last revision it received. A client that reads, however
	// slowly, is never cut.
	DefaultWatchStall = time.Minute
	// KindWatchCut is how the hub counts the watchers cut for stalling:
	// tether_hub_controller_errors_total{component="clientapi",kind="watch_cut"}.
	KindWatchCut = "watch_cut"
	// maxListPageSize is the largest page_size List serves; larger is
	// INVALID_ARGUMENT, so that no read holds the whole store at once.
	maxListPageSize = 5000
)

// Config tunes the services; the zero value uses the defaults.
type Config struct {
	// MaxObjectBytes is the largest object, as stored JSON, that Apply
	// accepts (default DefaultMaxObjectBytes).
	MaxObjectBytes int
	// MaxManifestBytes is the largest Apply or Simulate input (default
	// codec.DefaultMaxBytes, 3 MiB). The gRPC server's own receive limit
	// must be above it.
	MaxManifestBytes int
	// WatchBufferEvents and WatchBufferBytes bound the events a Watch
	// has read from etcd and its client has not (defaults
	// DefaultWatchBufferEvents and DefaultWatchBufferBytes).
	WatchBufferEvents, WatchBufferBytes int
	// WatchStall is how long a full buffer waits for its client (default
	// DefaultWatchStall); OnWatchCut, when set, is called each time a
	// watcher is cut for it.
	WatchStall time.Duration
	OnWatchCut func()
	// Leases is the hub's view of cluster liveness (hub/liveness), which
	// ClusterService shows as state, lease age and last heartbeat; nil
	// shows every cluster as Unknown, with the capacity last stored.
	Leases Leases
	// Registry serves TokenService, UserService (its CA signs users'
	// certificates) and ClusterService's Remove and Approve; nil answers
	// them UNIMPLEMENTED.
	Registry *membership.Registry
	// Revocations serves UserService's RevokeUser and ListRevokedUsers;
	// nil answers them UNIMPLEMENTED. The server must also refuse the
	// revoked certificates (RefuseRevoked) for them to take effect.
	Revocations *revocation.List
	// Roles are the users' stored grants (hub/roles), which every call is
	// decided with and open streams follow; they also serve UserService's
	// SetUserRole and ListUserRoles. Nil: each certificate has the role it
	// carries (roles.CertGrant), and those two answer UNIMPLEMENTED.
	Roles *roles.Book
	// LuaLimits bound the dry run of ResourceInterpreterCustomizations'
	// scripts at Apply; zero takes luavm.DefaultLimits, which the hub's
	// interpreter also uses.
	LuaLimits luavm.Limits
	// Scheduling are the options the hub's scheduling loop runs with
	// (hub/scheduler: failover of unreachable clusters, their toleration,
	// eviction timeout): Simulate decides with them, and GetPlacement
	// recomputes rejections with them. Options.Full and UnhealthySince, the
	// loop's own state, are not known here.
	Scheduling place.Options
	// Namespaces, when set, is the detector's filter with namespace
	// auto-propagation on: Simulate then places a Namespace no
	// ClusterPropagationPolicy matches as the detector does (every
	// cluster). Nil: namespace auto-propagation is off.
	Namespaces *bind.Filter
}

// Leases is what ClusterService reads of the clusters' leases; the hub's
// *liveness.Leases satisfies it.
type Leases interface {
	Get(cluster string) (lease lease.Lease, ok bool)
}

func (c Config) withDefaults() Config {
	if c.MaxObjectBytes <= 0 {
		c.MaxObjectBytes = DefaultMaxObjectBytes
	}
	if c.MaxManifestBytes <= 0 {
		c.MaxManifestBytes = codec.DefaultMaxBytes
	}
	if c.WatchBufferEvents <= 0 {
		c.WatchBufferEvents = DefaultWatchBufferEvents
	}
	if c.WatchBufferBytes <= 0 {
		c.WatchBufferBytes = DefaultWatchBufferBytes
	}
	if c.WatchStall <= 0 {
		c.WatchStall = DefaultWatchStall
	}
	if c.OnWatchCut == nil {
		c.OnWatchCut = func() {}
	}
	if c.LuaLimits == (luavm.Limits{}) {
		c.LuaLimits = luavm.DefaultLimits()
	}
	return c
}

// Interpreter is what the services need of the resource interpreter: the
// facade in internal/interpreter satisfies it.
type Interpreter interface {
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
	GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, error)
	GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error)
	ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replica int64) (*unstructured.Unstructured, error)
	AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error)
}

// Server holds the client API's services over one store.
type Server struct {
	// Objects implements ObjectService.
	Objects *Objects
	// Placements implements PlacementService.
	Placements *Placements
}

// backend is what every service shares.
type backend struct {
	cfg    Config
	st     *store.Store
	interp Interpreter
	// vm dry-runs customizations' scripts (checkCustomizations).
	vm  *luavm.VM
	log hclog.Logger
	// getLocal is Apply's fast read (store.GetLocalAll); tests make it stale.
	getLocal getter
	// clusters are the registered clusters WatchPlacements streams
	// recompute rejections with.
	clusters *clusterCache
}

// New returns the services over st. A nil interp gets the interpreter's
// built-in chain (native rules and built-in customizations, no RICs).
func New(cfg Config, st *store.Store, interp Interpreter, logger hclog.Logger) (*Server, error) {
	if st == nil {
		return nil, fmt.Errorf("clientapi: a store is required")
	}
	if interp == nil {
		i, err := interpreter.New(interpreter.Config{}, logger)
		if err != nil {
			return nil, fmt.Errorf("clientapi: interpreter: %w", err)
		}
		interp = i
	}
	cfg = cfg.withDefaults()
	b := &backend{cfg: cfg, st: st, interp: interp, vm: luavm.New(luavm.Options{Limits: cfg.LuaLimits}), log: logger.Named("clientapi")}
	b.getLocal = st.GetLocalAll
	b.clusters = newClusterCache(st)
	return &Server{Objects: &Objects{b: b}, Placements: &Placements{b: b}}, nil
}

// Register registers ObjectService, PlacementService, ClusterService,
// TokenService, UserService and RolloutService on r (the hub's gRPC server).
func (s *Server) Register(r grpc.ServiceRegistrar) {
	hubv1.RegisterObjectServiceServer(r, s.Objects)
	hubv1.RegisterPlacementServiceServer(r, s.Placements)
	hubv1.RegisterClusterServiceServer(r, clusterService{b: s.Objects.b})
	hubv1.RegisterTokenServiceServer(r, tokenService{b: s.Objects.b})
	hubv1.RegisterUserServiceServer(r, userService{b: s.Objects.b})
	hubv1.RegisterRolloutServiceServer(r, rolloutService{b: s.Objects.b})
}
