package hubtest

import (
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Welcome is a Welcome from hub identity id with heartbeats every beat.
func Welcome(id string, beat time.Duration) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_Welcome{Welcome: &agentv1.Welcome{
		HubIdentity: id, HubVersion: "hubtest",
		Settings: &agentv1.Settings{HeartbeatInterval: durationpb.New(beat)},
	}}}
}

// Upsert is a WorkUpsert of key at version with one ConfigMap manifest.
func Upsert(key, version string) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_WorkUpsert{WorkUpsert: &agentv1.WorkUpsert{
		WorkKey: key, Version: version,
		Manifests: [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + key + `","namespace":"default"}}`)},
		Binding:   &agentv1.BindingReference{Namespace: "default", Name: key, Uid: "uid-" + key},
	}}}
}

// Delete is a WorkDelete of key with policy.
func Delete(key string, policy agentv1.DeletionPolicy) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_WorkDelete{WorkDelete: &agentv1.WorkDelete{
		WorkKey: key, DeletionPolicy: policy,
	}}}
}

// SyncDone is a SyncDone for n works from a hub that does not vouch for
// its key set (as one that predates SyncDone.work_keys).
func SyncDone(n int) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_SyncDone{SyncDone: &agentv1.SyncDone{WorkCount: int32(n)}}}
}

// SyncDoneKeys is an authoritative SyncDone: the hub has exactly keys for
// the cluster.
func SyncDoneKeys(keys ...string) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_SyncDone{SyncDone: &agentv1.SyncDone{
		WorkCount: int32(len(keys)), WorkKeys: keys, Authoritative: true,
	}}}
}

// StatusRequest asks for the statuses of keys (all when none).
func StatusRequest(keys ...string) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_StatusRequest{StatusRequest: &agentv1.StatusRequest{WorkKeys: keys}}}
}

// Goodbye ends a stream for reason.
func Goodbye(reason agentv1.DisconnectReason, retryAfter time.Duration) *agentv1.HubMessage {
	g := &agentv1.Goodbye{Reason: reason, Message: "hubtest says goodbye"}
	if retryAfter > 0 {
		g.RetryAfter = durationpb.New(retryAfter)
	}
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_Goodbye{Goodbye: g}}
}

// Renewed answers a CertificateRenewal with certPEM, or refuses it with
// refusal when certPEM is nil.
func Renewed(certPEM []byte, refusal string) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_CertificateRenewed{CertificateRenewed: &agentv1.CertificateRenewed{
		CertificatePem: certPEM, ErrorMessage: refusal,
	}}}
}

// Renewals keeps certificate renewal requests.
func Renewals(m *agentv1.AgentMessage) bool { return m.GetCertificateRenewal() != nil }
