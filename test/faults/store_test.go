package faults_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	etcdserverpb "go.etcd.io/etcd/api/v3/etcdserverpb"
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
	e, err := startOffline(t, dataDir)
	if err != nil {
		return err
	}
	defer e.Close()
	if _, err := e.Server.Put(ctx, &etcdserverpb.PutRequest{Key: []byte(key), Value: []byte(value)}); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}
