package faults_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
	etcdserverpb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/embed"
)

// identityKey is where the hub keeps its identity (hub/store).
const identityKey = "/tether/meta/identity"

// newerWorkKey is the work of newerPlacement's ConfigMap (hub/render:
// <group>/<Kind>/<namespace>/<name>, "core" for the legacy group).
const newerWorkKey = "core/ConfigMap/default/faults-newer"

// dataDirRestored: the hub's whole data directory (its etcd and the record
// next to its CA, as a volume snapshot of the default embedded hub holds
// them) is put back from a copy taken before a newer placement. Nothing on
// the hub's side can tell; the agents can (they saw a newer store
// revision), and neither they nor the hub delete anything. An operator then
// adopts the fleet (--accept-store-reset): the newer placement, which the
// restored hub does not have, stays in the members, unmanaged and listed
// in their clusters' conditions.
func dataDirRestored(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	backup := filepath.Join(t.TempDir(), "data")
	hubRestartedWithStore(ctx, t, x, func(string) error { return copyDir(x.fleet.HubDir, backup) })
	waitReady(ctx, t, x)
	if _, err := x.client.Apply(ctx, []byte(newerPlacement)); err != nil {
		t.Fatal(err)
	}
	x.waitObject(ctx, configMaps, "faults-newer")
	r := x.begin(t.Name())
	hubRestartedWithStore(ctx, t, x, func(string) error {
		if err := os.RemoveAll(x.fleet.HubDir); err != nil {
			return err
		}
		return copyDir(backup, x.fleet.HubDir)
	})
	r.hold(orphanWindow)
	for _, d := range x.watch.Deletes() { // before the adoption, which finish covers too
		t.Errorf("deleted after the restore, before any adoption: %s at fault+%s (%s)", d.Object, d.At.Sub(r.faultAt).Round(100*time.Millisecond), d.How)
	}
	waitConditions(ctx, t, x, "HubTrusted", "False", "")
	if err := x.fleet.RestartWith(ctx, fleet.RoleHub, "hub", "--accept-store-reset"); err != nil {
		t.Fatal(err)
	}
	waitConditions(ctx, t, x, "UnmanagedWorks", "True", newerWorkKey)
	r.hold(orphanWindow / 2)
	r.healed()
	r.converge()
	r.finish()
}

// identityDeleted: the hub's identity key is deleted from its store while
// it is down. The hub refuses to start (a new identity would make every
// agent take it for another hub) until the operator gives the identity
// back with --adopt-identity; nothing is deleted in the members.
func identityDeleted(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := x.begin(t.Name())
	if err := x.fleet.Kill(fleet.RoleHub, "hub"); err != nil {
		t.Fatal(err)
	}
	old, err := deleteOffline(ctx, t, x.fleet.HubDir, identityKey)
	if err != nil {
		t.Fatal(err)
	}
	err = x.fleet.Restart(ctx, fleet.RoleHub, "hub")
	if err == nil || !strings.Contains(err.Error(), "identity is missing") {
		t.Fatalf("hub started on a store with data and no identity: %v; want a refusal naming the missing identity", err)
	}
	t.Logf("the hub refused to start, as it should: %v", firstLine(err.Error()))
	if err := x.fleet.RestartWith(ctx, fleet.RoleHub, "hub", "--adopt-identity", old); err != nil {
		t.Fatal(err)
	}
	r.hold(orphanWindow)
	r.healed()
	r.converge()
	r.finish()
}

// waitConditions waits until every cluster has a condition of type typ
// with status, whose message contains msg.
func waitConditions(ctx context.Context, t *testing.T, x *fixture, typ, status, msg string) {
	err := proc.Poll(ctx, time.Second, func(ctx context.Context) error {
		resp, err := x.client.Clusters.ListClusters(ctx, &hubv1.ListClustersRequest{})
		if err != nil {
			return err
		}
		for _, c := range resp.GetClusters() {
			if !hasCondition(c, typ, status, msg) {
				return fmt.Errorf("cluster %s: no condition %s=%s with %q: %v", c.GetName(), typ, status, msg, c.GetConditions())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func hasCondition(c *hubv1.Cluster, typ, status, msg string) bool {
	for _, cond := range c.GetConditions() {
		if cond.GetType() == typ && strings.EqualFold(cond.GetStatus(), status) && strings.Contains(cond.GetMessage(), msg) {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// deleteOffline deletes key from the etcd of a stopped hub (its
// --data-dir) and returns the value it had.
func deleteOffline(ctx context.Context, t *testing.T, dataDir, key string) (string, error) {
	e, err := startOffline(t, dataDir)
	if err != nil {
		return "", err
	}
	defer e.Close()
	resp, err := e.Server.DeleteRange(ctx, &etcdserverpb.DeleteRangeRequest{Key: []byte(key), PrevKv: true})
	if err != nil {
		return "", fmt.Errorf("delete %s: %w", key, err)
	}
	if len(resp.PrevKvs) != 1 {
		return "", fmt.Errorf("delete %s: the key was not there", key)
	}
	return string(resp.PrevKvs[0].Value), nil
}

// startOffline starts the etcd of a stopped hub in this process, as the hub
// starts it.
func startOffline(t *testing.T, dataDir string) (*embed.Etcd, error) {
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
		return nil, fmt.Errorf("start the hub's etcd offline: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("the hub's etcd offline: %w", err)
	case <-time.After(offlineStartTimeout):
		e.Close()
		return nil, fmt.Errorf("the hub's etcd offline not ready after %s", offlineStartTimeout)
	}
}
