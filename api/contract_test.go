package api_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

var (
	testTime = timestamppb.New(time.Date(2025, 11, 21, 6, 0, 0, 0, time.UTC))
	testCSR  = []byte("-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n")
	testCert = []byte("-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n")
)

func testIdentity() *agentv1.ObjectIdentity {
	return &agentv1.ObjectIdentity{Ordinal: 1, Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"}
}

// agentMessages has one populated AgentMessage per branch of its oneof.
func agentMessages() map[string]*agentv1.AgentMessage {
	return map[string]*agentv1.AgentMessage{
		"hello": {Message: &agentv1.AgentMessage_Hello{Hello: &agentv1.Hello{
			AgentVersion:     "v0.1.0",
			LastHubIdentity:  "hub-7f3a",
			HeldWorks:        []*agentv1.HeldWork{{WorkKey: "default/web", Version: "sha256:aa"}},
			ReportedStatuses: []*agentv1.ReportedStatus{{WorkKey: "default/web", Version: "sha256:aa", StatusDigest: "d1"}},
		}}},
		"ack": {Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{
			WorkKey: "default/web",
			Version: "sha256:aa",
			Result:  agentv1.ApplyResult_APPLY_RESULT_CONFLICT,
			Message: "deployment default/web exists and is not Tether's",
			Objects: []*agentv1.ObjectResult{{Identity: testIdentity(), Result: agentv1.ApplyResult_APPLY_RESULT_CONFLICT, Message: "not owned"}},
		}}},
		"status_report": {Message: &agentv1.AgentMessage_StatusReport{StatusReport: &agentv1.StatusReport{
			WorkKey: "default/web",
			Version: "sha256:aa",
			Digest:  "d2",
			Manifests: []*agentv1.ManifestStatus{{
				Identity:   testIdentity(),
				StatusJson: []byte(`{"readyReplicas":3}`),
				Health:     agentv1.Health_HEALTH_HEALTHY,
				Applied:    true,
			}},
			ObserveTime: testTime,
		}}},
		"heartbeat": {Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{
			AgentVersion:      "v0.1.0",
			KubernetesVersion: "v1.34.4",
			ResourceSummary: &agentv1.ResourceSummary{
				Allocatable: map[string]string{"cpu": "16", "memory": "64Gi"},
				Allocated:   map[string]string{"cpu": "4"},
				Allocating:  map[string]string{"cpu": "500m"},
				NodeGroups: []*agentv1.NodeGroupSummary{{
					Name: "gpu", NodeCount: 2, Allocatable: map[string]string{"nvidia.com/gpu": "8"},
				}},
				AllocatableModelings: []*agentv1.AllocatableModeling{{Grade: 0, Count: 3}},
			},
			ApiEnablements: []*agentv1.APIEnablement{{
				GroupVersion: "apps/v1",
				Resources:    []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true}},
			}},
			Conditions: []*agentv1.Condition{{
				Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE, Reason: "AgentReady", LastTransitionTime: testTime,
			}},
			Topology: &agentv1.Topology{Provider: "aws", Region: "eu-west-1", Zones: []string{"eu-west-1a"}},
		}}},
		"certificate_renewal": {Message: &agentv1.AgentMessage_CertificateRenewal{CertificateRenewal: &agentv1.CertificateRenewal{
			CsrPem: testCSR,
		}}},
		"customizations_ack": {Message: &agentv1.AgentMessage_CustomizationsAck{CustomizationsAck: &agentv1.CustomizationsAck{
			Version: "c0ffee", Refused: []string{"customization web: does not decode"},
		}}},
	}
}

func testSettings() *agentv1.Settings {
	return &agentv1.Settings{
		HeartbeatInterval: durationpb.New(10 * time.Second),
		LeaseDuration:     durationpb.New(40 * time.Second),
		StatusMinInterval: durationpb.New(time.Second),
		Limits:            &agentv1.Limits{MaxMessageBytes: 4 << 20, MaxWorks: 10000},
		ResourceModels: []*agentv1.ResourceModel{{
			Grade:  0,
			Ranges: []*agentv1.ResourceModelRange{{Name: "cpu", Min: "0", Max: "4"}},
		}},
	}
}

// hubMessages has one populated HubMessage per branch of its oneof.
func hubMessages() map[string]*agentv1.HubMessage {
	return map[string]*agentv1.HubMessage{
		"welcome": {Message: &agentv1.HubMessage_Welcome{Welcome: &agentv1.Welcome{
			HubIdentity: "hub-7f3a",
			HubVersion:  "v0.1.0",
			Settings:    testSettings(),
		}}},
		"work_upsert": {Message: &agentv1.HubMessage_WorkUpsert{WorkUpsert: &agentv1.WorkUpsert{
			WorkKey:   "default/web",
			Version:   "sha256:bb",
			Manifests: [][]byte{[]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}`)},
			ApplyOptions: &agentv1.ApplyOptions{
				Strategy:           agentv1.ApplyStrategy_APPLY_STRATEGY_SERVER_SIDE_APPLY,
				ConflictResolution: agentv1.ConflictResolution_CONFLICT_RESOLUTION_ABORT,
				DeletionPolicy:     agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN,
			},
			Binding: &agentv1.BindingReference{Namespace: "default", Name: "web-deployment", Uid: "0b1c"},
		}}},
		"work_delete": {Message: &agentv1.HubMessage_WorkDelete{WorkDelete: &agentv1.WorkDelete{
			WorkKey: "default/old", DeletionPolicy: agentv1.DeletionPolicy_DELETION_POLICY_DELETE,
		}}},
		"sync_done": {Message: &agentv1.HubMessage_SyncDone{SyncDone: &agentv1.SyncDone{WorkCount: 12}}},
		"status_request": {Message: &agentv1.HubMessage_StatusRequest{StatusRequest: &agentv1.StatusRequest{
			WorkKeys: []string{"default/web"},
		}}},
		"certificate_renewed": {Message: &agentv1.HubMessage_CertificateRenewed{CertificateRenewed: &agentv1.CertificateRenewed{
			CertificatePem: testCert, CaBundlePem: testCert, NotAfter: testTime,
		}}},
		"goodbye": {Message: &agentv1.HubMessage_Goodbye{Goodbye: &agentv1.Goodbye{
			Reason: agentv1.DisconnectReason_DISCONNECT_REASON_SHUTDOWN, Message: "hub shutting down", RetryAfter: durationpb.New(2 * time.Second),
		}}},
		"settings": {Message: &agentv1.HubMessage_Settings{Settings: testSettings()}},
		"customizations": {Message: &agentv1.HubMessage_Customizations{Customizations: &agentv1.Customizations{
			Version:                           "c0ffee",
			ResourceInterpreterCustomizations: [][]byte{[]byte(`{"kind":"ResourceInterpreterCustomization"}`)},
			WebhookConfigurations:             [][]byte{[]byte(`{"kind":"ResourceInterpreterWebhookConfiguration"}`)},
		}}},
	}
}

// roundTrip marshals m, unmarshals it into a new message of its type and
// fails unless the two are equal.
func roundTrip(t *testing.T, m proto.Message) {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatalf("Marshal(%v): %v", m, err)
	}
	got := m.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(b, got); err != nil {
		t.Fatalf("Unmarshal(%x): %v", b, err)
	}
	if !proto.Equal(got, m) {
		t.Errorf("round trip = %v; want %v", got, m)
	}
}

// checkBranches fails unless each case sets the oneof branch it is named
// after, and every branch of the oneof has a case.
func checkBranches[M proto.Message](t *testing.T, oneof protoreflect.OneofDescriptor, cases map[string]M) {
	t.Helper()
	for name, m := range cases {
		f := m.ProtoReflect().WhichOneof(oneof)
		if f == nil || string(f.Name()) != name {
			t.Errorf("case %q sets branch %v; want %q", name, f, name)
		}
	}
	fields := oneof.Fields()
	for i := 0; i < fields.Len(); i++ {
		if _, ok := cases[string(fields.Get(i).Name())]; !ok {
			t.Errorf("oneof %s branch %s has no round-trip case", oneof.FullName(), fields.Get(i).Name())
		}
	}
}

func TestAgentMessageRoundTrip(t *testing.T) {
	cases := agentMessages()
	checkBranches(t, (&agentv1.AgentMessage{}).ProtoReflect().Descriptor().Oneofs().ByName("message"), cases)
	for name, m := range cases {
		t.Run(name, func(t *testing.T) { roundTrip(t, m) })
	}
}

func TestHubMessageRoundTrip(t *testing.T) {
	cases := hubMessages()
	checkBranches(t, (&agentv1.HubMessage{}).ProtoReflect().Descriptor().Oneofs().ByName("message"), cases)
	for name, m := range cases {
		t.Run(name, func(t *testing.T) { roundTrip(t, m) })
	}
}

func TestClientAPIRoundTrip(t *testing.T) {
	ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}
	tests := map[string]proto.Message{
		"register_request": &agentv1.RegisterRequest{
			Token: "abcdef.0123456789abcdef", ClusterName: "edge-1", CsrPem: testCSR, AgentVersion: "v0.1.0",
			Topology: &agentv1.Topology{Region: "eu"},
		},
		"register_response": &agentv1.RegisterResponse{
			CertificatePem: testCert, CaBundlePem: testCert, ClusterName: "edge-1", NotAfter: testTime,
		},
		"apply_response": &hubv1.ApplyResponse{
			Results: []*hubv1.ApplyResult{{
				Ref: ref, Outcome: hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED,
				FieldErrors: []*hubv1.FieldError{{Field: "spec.replicas", Type: "FieldValueInvalid", BadValue: "-1", Detail: "must be >= 0"}},
			}},
		},
		"watch_response": &hubv1.WatchResponse{
			Type:   hubv1.EventType_EVENT_TYPE_MODIFIED,
			Object: &hubv1.Object{Ref: ref, Revision: 42, ObjectJson: []byte(`{"kind":"Deployment"}`)},
		},
		"simulate_response": &hubv1.SimulateResponse{
			Placement: &hubv1.Placement{
				Template: ref, Scheduled: true, Revision: 42, ScheduleTime: testTime,
				Clusters:   []*hubv1.ClusterPlacement{{Cluster: "edge-1", Replicas: 2}},
				Rejections: []*hubv1.ClusterRejection{{Cluster: "edge-2", Reasons: []string{"taint dedicated=gpu:NoSchedule not tolerated"}}},
			},
			Rendered: []*hubv1.RenderedCluster{{Cluster: "edge-1", ObjectsJson: [][]byte{[]byte(`{}`)}}},
		},
		"cluster": &hubv1.Cluster{
			Name: "edge-1", State: hubv1.ClusterState_CLUSTER_STATE_READY, Connected: true,
			Labels:   map[string]string{"region": "eu"},
			Taints:   []*hubv1.Taint{{Key: "dedicated", Value: "gpu", Effect: hubv1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE, AddTime: testTime}},
			LeaseAge: durationpb.New(3 * time.Second),
			Capacity: &hubv1.Capacity{Allocatable: map[string]string{"cpu": "16"}},
		},
		"create_token_response": &hubv1.CreateTokenResponse{
			Token: "abcdef.0123456789abcdef", CaHash: "sha256:" + strings.Repeat("ab", 32), ExpireTime: testTime,
			Info: &hubv1.Token{Id: "abcdef", ClusterName: "edge-1", UsesLeft: 1},
		},
		"create_user_response": &hubv1.CreateUserResponse{
			CertificatePem: testCert, PrivateKeyPem: []byte("key"), CaBundlePem: testCert, NotAfter: testTime,
		},
	}
	for name, m := range tests {
		t.Run(name, func(t *testing.T) { roundTrip(t, m) })
	}
}

// clusterFields returns the path of every field whose name mentions a
// cluster in messages reachable from md, following message, map and
// repeated fields.
func clusterFields(md protoreflect.MessageDescriptor) []string {
	var found []string
	seen := map[protoreflect.FullName]bool{}
	var walk func(protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		fields := md.Fields()
		for i := 0; i < fields.Len(); i++ {
			f := fields.Get(i)
			if strings.Contains(strings.ToLower(string(f.Name())), "cluster") {
				found = append(found, string(f.FullName()))
			}
			if f.Message() != nil {
				walk(f.Message())
			}
		}
	}
	walk(md)
	return found
}

// TestConnectCarriesNoClusterIdentity guards DESIGN §8: on the stream the hub
// takes the cluster's name from the client certificate only, so no message
// either way may have a field that could name a cluster.
func TestConnectCarriesNoClusterIdentity(t *testing.T) {
	svc := agentv1.File_tether_agent_v1_agent_proto.Services().ByName("AgentService")
	if svc == nil {
		t.Fatal("AgentService not found in tether/agent/v1/agent.proto")
	}
	connect := svc.Methods().ByName("Connect")
	if connect == nil || !connect.IsStreamingClient() || !connect.IsStreamingServer() {
		t.Fatalf("AgentService.Connect = %v; want a bidirectional stream", connect)
	}
	for _, md := range []protoreflect.MessageDescriptor{connect.Input(), connect.Output()} {
		if got := clusterFields(md); len(got) > 0 {
			t.Errorf("clusterFields(%s) = %v; want none: the cluster comes from the client certificate", md.FullName(), got)
		}
	}

	// The check must be able to fail: Register does carry the requested name.
	register := svc.Methods().ByName("Register")
	if got := clusterFields(register.Input()); len(got) == 0 {
		t.Errorf("clusterFields(%s) = none; want cluster_name (the check is blind)", register.Input().FullName())
	}
}
