package store

import (
	"path"
	"strings"
)

// Root is the prefix of every key the hub writes.
const Root = "/tether/"

// Key prefixes of the layout in the package documentation.
const (
	ObjectsPrefix  = Root + "objects/"
	BindingsPrefix = Root + "bindings/"
	ClustersPrefix = Root + "clusters/"
	TokensPrefix   = Root + "tokens/"
	AgentsPrefix   = Root + "agents/"
	// RevokedUsersPrefix holds the revoked user names (hub/revocation):
	// RevokedUserKey.
	RevokedUsersPrefix = Root + "revoked-users/"
	// UserRolesPrefix holds each user's role and namespaces (hub/roles):
	// UserRoleKey.
	UserRolesPrefix = Root + "user-roles/"
	// LivenessPrefix holds two records per cluster whose agent is streaming
	// to some replica (hub/liveness), attached to that replica's etcd lease:
	// a small renewal (LivenessKey) and the last heartbeat (HeartbeatKey).
	LivenessPrefix = Root + "liveness/"
	livenessBeats  = LivenessPrefix + "beat/"
	livenessHBs    = LivenessPrefix + "hb/"
	// ReportsPrefix holds what agents last acknowledged and reported per
	// (cluster, work), relayed by the replica holding the cluster's stream
	// (hub/aggregate): ReportKey.
	ReportsPrefix = Root + "reports/"
	// RolloutsPrefix holds each rolled-out work's rollout state (the JSON
	// of hub/pipeline/rollout's State) and its template's recent contents,
	// written by the leader's rollout loop (hub/rollout): RolloutKey.
	RolloutsPrefix = Root + "rollouts/"
	identityKey    = Root + "meta/identity"
	epochKey       = Root + "meta/epoch"
	checkpointsKey = Root + "meta/checkpoints/"
	// AdoptionKey holds the operator's latest adoption of the fleet
	// (hub/authority): agents that hold the hub not authoritative for them
	// trust it again when it names their works' hub identity.
	AdoptionKey = Root + "meta/adoption"
)

// Keys of the hub's CA, shared by every replica on one etcd.
const (
	// CAHashKey holds the hash of the hub's CA, recorded by the first
	// replica that starts on the store; a replica with another CA refuses
	// to start.
	CAHashKey = Root + "meta/ca-hash"
	// SealedCAKey holds the CA created once for every replica, its key
	// encrypted (hub/pki.Seal), when the replicas are given an encryption
	// key instead of the CA.
	SealedCAKey = Root + "meta/ca"
)

// NoExecuteFloorKey holds when the scheduler's last full disruption ended
// (RFC 3339), written by the leader that saw it end, so that the next
// leader counts unreachable clusters' tolerations from there too
// (hub/scheduler).
const NoExecuteFloorKey = Root + "scheduler/noexecute-floor"

// LivenessKey is where the replica holding cluster's stream renews its
// liveness (hub/liveness).
func LivenessKey(cluster string) string { return livenessBeats + cluster }

// HeartbeatKey is where the replica holding cluster's stream writes its
// last heartbeat when its content changes (hub/liveness).
func HeartbeatKey(cluster string) string { return livenessHBs + cluster }

// ParseLivenessKey tells which of the two records of which cluster key is;
// ok is false for any other key.
func ParseLivenessKey(key string) (cluster string, heartbeat, ok bool) {
	if c, found := strings.CutPrefix(key, livenessBeats); found && c != "" {
		return c, false, true
	}
	if c, found := strings.CutPrefix(key, livenessHBs); found && c != "" {
		return c, true, true
	}
	return "", false, false
}

// ReportKey is where the last ack and status report of one work in one
// cluster are relayed (hub/aggregate).
func ReportKey(cluster, workKey string) string { return ReportsPrefix + cluster + "/" + workKey }

// ReportsOf lists the relayed reports of one cluster.
func ReportsOf(cluster string) string { return ReportsPrefix + cluster + "/" }

// ParseReportKey is the inverse of ReportKey; ok is false for any other key.
func ParseReportKey(key string) (cluster, workKey string, ok bool) {
	rest, found := strings.CutPrefix(key, ReportsPrefix)
	if !found {
		return "", "", false
	}
	cluster, workKey, found = strings.Cut(rest, "/")
	return cluster, workKey, found && cluster != "" && workKey != ""
}

// CheckpointKey is where the hub replica id writes its checkpoint counter
// (hub/authority).
func CheckpointKey(id string) string { return checkpointsKey + id }

// clusterScope stands for the namespace of a cluster-scoped object.
const clusterScope = "_"

// ObjectRef names a stored object. Group is the canonical API group, empty
// for the legacy core group.
type ObjectRef struct {
	Group, Kind, Namespace, Name string
}

// ObjectKey is where the user object ref is stored.
func ObjectKey(r ObjectRef) string { return ObjectsPrefix + r.suffix() }

// BindingKey is where the binding of the template ref is stored.
func BindingKey(r ObjectRef) string { return BindingsPrefix + r.suffix() }

// KindPrefix lists the objects (or bindings, with BindingsPrefix) of one
// kind, in every namespace when namespace is empty.
func KindPrefix(base, group, kind, namespace string) string {
	p := base + groupSegment(group) + "/" + kind + "/"
	if namespace != "" {
		p += namespace + "/"
	}
	return p
}

// RolloutKey is where the rollout of a work key is stored.
func RolloutKey(workKey string) string { return RolloutsPrefix + workKey }

// ClusterKey is the key of a cluster record.
func ClusterKey(name string) string { return ClustersPrefix + name }

// TokenKey is where the bootstrap token id is stored.
func TokenKey(id string) string { return TokensPrefix + id }

// AgentKey is where the key binding of the cluster name's agent is stored.
func AgentKey(name string) string { return AgentsPrefix + name }

// RevokedUserKey is where the revocation of user name is stored.
func RevokedUserKey(name string) string { return RevokedUsersPrefix + name }

// UserRoleKey is where the role of user name is stored.
func UserRoleKey(name string) string { return UserRolesPrefix + name }

// ParseObjectKey is the inverse of ObjectKey and BindingKey.
func ParseObjectKey(key string) (ObjectRef, bool) {
	if rest, ok := strings.CutPrefix(key, ObjectsPrefix); ok {
		return ParseObjectSuffix(rest)
	}
	if rest, ok := strings.CutPrefix(key, BindingsPrefix); ok {
		return ParseObjectSuffix(rest)
	}
	return ObjectRef{}, false
}

// ParseObjectSuffix is ParseObjectKey of what follows the prefix,
// "<group>/<Kind>/<namespace|_>/<name>". The ref's fields are parts of
// suffix: nothing is allocated (the hub parses every ack's and report's
// work key so).
func ParseObjectSuffix(suffix string) (ObjectRef, bool) {
	var parts [4]string
	rest := suffix
	for i := range parts[:3] {
		var ok bool
		if parts[i], rest, ok = strings.Cut(rest, "/"); !ok {
			return ObjectRef{}, false
		}
	}
	if strings.Contains(rest, "/") {
		return ObjectRef{}, false
	}
	parts[3] = rest
	r := ObjectRef{Group: parts[0], Kind: parts[1], Namespace: parts[2], Name: parts[3]}
	if r.Group == "core" {
		r.Group = ""
	}
	if r.Namespace == clusterScope {
		r.Namespace = ""
	}
	return r, true
}

func (r ObjectRef) suffix() string {
	ns := r.Namespace
	if ns == "" {
		ns = clusterScope
	}
	return path.Join(groupSegment(r.Group), r.Kind, ns, r.Name)
}

func groupSegment(group string) string {
	if group == "" {
		return "core"
	}
	return group
}
