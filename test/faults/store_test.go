package faults_test

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	etcdserverpb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/embed"
)

// bindingKey is where the hub stores nginx's ResourceBinding
// (hub/store: /tether/bindings/<group>/<Kind>/<namespace>/<name>).
const bindingKey = "/tether/bindings/apps/Deployment/default/nginx"

// undecodable is a value no decoder accepts.
const undecodable = `{"spec": {"clusters": [,,,`

// offlineStartTimeout bounds the start of the stopped hub's etcd.
const offlineStartTimeout = 30 * time.Second

// bindingUndecodable: with the hub stopped, nginx's binding is overwritten
// in the hub's etcd with bytes that do not decode; the hub starts again.
// A decode error must never mean "absent": the members keep nginx.
func bindingUndecodable(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := x.begin(t.Name())
	hubRestartedWithStore(ctx, t, x, func(etcdDir string) error {
		return putOffline(ctx, t, filepath.Dir(etcdDir), bindingKey, undecodable)
	})
	r.hold(unboundFor)
	r.healed()
	r.converge()
	r.finish()
}

// putOffline writes key=value into the etcd of a stopped hub (its
// --data-dir), started in this process as the hub starts it.
func putOffline(ctx context.Context, t *testing.T, dataDir, key, value string) error {
	cfg := embed.NewConfig()
	cfg.Name = "tether-hub" // the hub's member name (hub/store)
	cfg.Dir = filepath.Join(dataDir, "etcd")
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{local}, []url.URL{local}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{local}, []url.URL{local}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(t.TempDir(), "etcd.log")}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("start the hub's etcd offline: %w", err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fmt.Errorf("the hub's etcd offline: %w", err)
	case <-time.After(offlineStartTimeout):
		return fmt.Errorf("the hub's etcd offline not ready after %s", offlineStartTimeout)
	}
	if _, err := e.Server.Put(ctx, &etcdserverpb.PutRequest{Key: []byte(key), Value: []byte(value)}); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}
