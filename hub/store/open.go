package store

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/tetherproj/tether/internal/grpcbuf"
)

// Tuned limits of the embedded member.
const (
	// embeddedStartTimeout bounds how long the embedded member may take to
	// become ready; a healthy one on a local disk takes well under a second.
	embeddedStartTimeout = 60 * time.Second
	// maxRequestBytes is etcd's per-request limit, above the hub's default
	// 1.5 MiB object limit so that the hub's own check, with its clearer
	// message, refuses large objects first.
	maxRequestBytes = 4 << 20
	// quotaBackendBytes is the embedded member's database size limit (8 GiB,
	// etcd's recommended maximum).
	quotaBackendBytes = 8 << 30
	// catchUpEntries is how many raft log entries the embedded member keeps
	// in memory after each compaction of its log, for followers to catch
	// up from: it has none. etcd's default, 5,000, held every recent
	// write in memory (the aggregator's status writes of bindings of a
	// thousand clusters are 150 KiB each: hundreds of megabytes).
	catchUpEntries = 100
	// dialTimeout bounds the first connection to etcd and the first
	// request over it: an unreachable, misconfigured or quorum-less cluster
	// fails the start after this long instead of hanging it.
	dialTimeout = 10 * time.Second
)

// Config says which etcd to use.
type Config struct {
	// DataDir holds the embedded member's data (DataDir/etcd) and log.
	DataDir string
	// Endpoints of an external etcd cluster; empty means embedded.
	Endpoints []string
	// TLS to the external cluster; zero means none (http:// endpoints).
	TLS TLS
	// QuotaBytes is the embedded member's database size limit; zero:
	// quotaBackendBytes.
	QuotaBytes int64
}

// Store is the hub's handle on etcd. Its methods are safe for concurrent use.
type Store struct {
	client *clientv3.Client
	member *embed.Etcd // nil with an external cluster
	log    hclog.Logger
	fence  *Fence // nil: writes are not fenced (Fenced)
	view   bool   // a view of another Store: Close does nothing
	// counts are the requests of s and its views (Requests).
	counts *counters
}

// Open connects to the external cluster of cfg, or starts the embedded member
// and connects to it. Close releases both.
func Open(ctx context.Context, cfg Config, logger hclog.Logger) (*Store, error) {
	s := &Store{log: logger, counts: &counters{}}
	endpoints := cfg.Endpoints
	tlsCfg, err := externalTLS(cfg)
	if err != nil {
		return nil, err
	}
	if len(endpoints) == 0 {
		member, err := startEmbedded(cfg.DataDir, cfg.QuotaBytes)
		if err != nil {
			return nil, err
		}
		s.member = member
		endpoints = []string{member.Clients[0].Addr().String()}
		logger.Info("embedded etcd started", "data_dir", member.Config().Dir, "endpoint", endpoints[0])
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:          endpoints,
		DialTimeout:        dialTimeout,
		MaxCallSendMsgSize: maxRequestBytes,
		TLS:                tlsCfg,
		Context:            ctx,
		Logger:             zap.NewNop(),
		DialOptions:        []grpc.DialOption{grpcbuf.DialOption()},
	})
	if err != nil {
		s.closeMember()
		return nil, fmt.Errorf("store: connect to etcd %v: %w", endpoints, err)
	}
	s.client = client
	if err := s.ping(ctx, endpoints); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// externalTLS checks cfg's TLS against its endpoints and reads the files.
func externalTLS(cfg Config) (*tls.Config, error) {
	if len(cfg.Endpoints) == 0 && cfg.TLS.enabled() {
		return nil, fmt.Errorf("store: etcd TLS files need external endpoints; the embedded etcd is local and plaintext")
	}
	if err := cfg.TLS.checkSchemes(cfg.Endpoints); err != nil {
		return nil, err
	}
	return cfg.TLS.config()
}

// startEmbedded starts a single-member etcd in dataDir/etcd listening on
// 127.0.0.1 ports the kernel picks.
func startEmbedded(dataDir string, quota int64) (*embed.Etcd, error) {
	if dataDir == "" {
		return nil, fmt.Errorf("store: embedded etcd needs a data directory")
	}
	cfg := embed.NewConfig()
	cfg.Name = "tether-hub"
	cfg.Dir = filepath.Join(dataDir, "etcd")
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{local}, []url.URL{local}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{local}, []url.URL{local}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.MaxRequestBytes = maxRequestBytes
	cfg.QuotaBackendBytes = quotaBackendBytes
	if quota > 0 {
		cfg.QuotaBackendBytes = quota
	}
	cfg.AutoCompactionMode, cfg.AutoCompactionRetention = embed.CompactorModePeriodic, "1h"
	cfg.SnapshotCatchUpEntries = catchUpEntries
	cfg.GRPCAdditionalServerOptions = []grpc.ServerOption{grpcbuf.ServerOption()}
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{filepath.Join(dataDir, "etcd.log")}
	member, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("store: start embedded etcd in %s: %w", cfg.Dir, err)
	}
	select {
	case <-member.Server.ReadyNotify():
		return member, nil
	case err := <-member.Err():
		member.Close()
		return nil, fmt.Errorf("store: embedded etcd in %s: %w", cfg.Dir, err)
	case <-time.After(embeddedStartTimeout):
		member.Close()
		return nil, fmt.Errorf("store: embedded etcd in %s not ready after %s", cfg.Dir, embeddedStartTimeout)
	}
}

// ping makes the first request, bounded by dialTimeout, so that an etcd
// that cannot be reached (or refuses the hub's TLS) fails the start with
// the endpoints named.
func (s *Store) ping(ctx context.Context, endpoints []string) error {
	pctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	if _, err := s.client.Get(pctx, identityKey); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("store: connect to etcd %s: %w", strings.Join(endpoints, ","), ctx.Err())
		}
		return fmt.Errorf("store: etcd %s not reachable within %s (check the endpoints, that etcd runs, and its TLS): %w",
			strings.Join(endpoints, ","), dialTimeout, err)
	}
	return nil
}

// Close disconnects and stops the embedded member, if any.
func (s *Store) Close() error {
	if s.view {
		return nil
	}
	var err error
	if s.client != nil {
		err = s.client.Close()
	}
	s.closeMember()
	return err
}

func (s *Store) closeMember() {
	if s.member != nil {
		s.member.Close()
		s.member = nil
	}
}

// Reachable makes one linearizable read, which etcd answers only with a
// quorum behind it: nil means the store can be read and written now.
func (s *Store) Reachable(ctx context.Context) error {
	s.counts.quorumReads.Add(1)
	if _, err := s.client.Get(ctx, identityKey); err != nil {
		return wrap("get", identityKey, err)
	}
	return nil
}
