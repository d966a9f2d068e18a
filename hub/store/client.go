package store

import clientv3 "go.etcd.io/etcd/client/v3"

// Client returns the etcd client, for what needs etcd's own primitives
// (leases, elections: hub/leader, hub/liveness' heartbeat records). Keys
// still follow the layout in this package's doc.
func (s *Store) Client() *clientv3.Client { return s.client }
