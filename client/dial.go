package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/internal/hubdial"
)

// Tuned limits of the connection.
const (
	// connectTimeout bounds one attempt to reach the hub, so that a hub
	// behind a black-holed address fails a call in seconds, not after the
	// kernel's TCP timeout.
	connectTimeout = 5 * time.Second
	// maxRecvBytes is the largest response accepted: 64 MiB, room for a
	// List page of large objects (gRPC's default is 4 MiB).
	maxRecvBytes = 64 << 20
)

// Client is a connection to one hub. Its methods may be called
// concurrently; Close it when done.
type Client struct {
	conn *grpc.ClientConn
	cfg  Config
	// Objects, Placements and Clusters are the generated service clients,
	// for a request the typed methods do not make (every call has a typed
	// method); pass their errors through Explain.
	Objects    hubv1.ObjectServiceClient
	Placements hubv1.PlacementServiceClient
	Clusters   hubv1.ClusterServiceClient
	tokens     hubv1.TokenServiceClient
	users      hubv1.UserServiceClient
	rollouts   hubv1.RolloutServiceClient
}

// Dial connects to the hub cfg names and checks, within ctx, that the hub
// answers and accepts the certificate (one gRPC health check), so that a
// wrong address or credentials fail here with an explained error. A hub
// that does not serve health checks is taken as reachable.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	addrs, err := cfg.addrs()
	if err != nil {
		return nil, fmt.Errorf("dial hub: %w", err)
	}
	tlsCfg, err := cfg.tls(time.Now())
	if err != nil {
		return nil, fmt.Errorf("dial hub %s: %w", cfg.Address, err)
	}
	conn, err := hubdial.Dial(addrs, hubdial.PickFirstShuffled, tlsCfg,
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: connectTimeout}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvBytes)),
	)
	if err != nil {
		return nil, fmt.Errorf("dial hub %s: %w", cfg.Address, err)
	}
	c := &Client{conn: conn, cfg: cfg, Objects: hubv1.NewObjectServiceClient(conn),
		Placements: hubv1.NewPlacementServiceClient(conn), Clusters: hubv1.NewClusterServiceClient(conn),
		tokens: hubv1.NewTokenServiceClient(conn), users: hubv1.NewUserServiceClient(conn),
		rollouts: hubv1.NewRolloutServiceClient(conn)}
	if err := c.check(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// check makes one health check: any answer, SERVING or not, shows the hub
// reachable and the certificate accepted.
func (c *Client) check(ctx context.Context) error {
	_, err := healthpb.NewHealthClient(c.conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if status.Code(err) == codes.Unimplemented {
		return nil
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return c.Explain(err)
	}
	return err
}

// Conn is the underlying connection, for services this package does not
// wrap.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Config is the configuration the client was dialed with.
func (c *Client) Config() Config { return c.cfg }

// Close closes the connection; calls in flight fail with Canceled.
func (c *Client) Close() error { return c.conn.Close() }

// Explain turns an error of a call on this client into one that says what
// to do (see Config.Explain).
func (c *Client) Explain(err error) error { return c.cfg.Explain(err) }
