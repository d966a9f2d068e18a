package grpcurl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/test/proc"
)

// previousContract is the client API of the previous release
// (PROTO_COMPAT_BASE in mk/proto.mk) as a buf image: `make
// compat-contract` writes it. A client built from it knows none of the
// fields and methods added since.
const previousContract = "testdata/contract-57a6d99.binpb"

// TestPreviousReleaseClient: a client speaking the previous release's
// contract (dynamic messages from its descriptors, so nothing of today's
// generated code) applies, lists, gets a placement and watches it on
// today's hub, and understands every answer: the v1 client API only grew.
func TestPreviousReleaseClient(t *testing.T) {
	old := loadContract(t)
	hubDir := startHub(t)
	conn := dialAdmin(t, filepath.Join(hubDir, "admin.conf"))
	manifest, err := os.ReadFile(filepath.Join(repoRoot, "examples", "nginx.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()

	applied := call(ctx, t, conn, old, "tether.hub.v1.ObjectService.Apply", map[string]any{"manifests": manifest})
	if !applied.Get(field(applied, "committed")).Bool() {
		t.Fatalf("Apply of the previous release's ApplyRequest = %v; want committed", applied)
	}

	listed := call(ctx, t, conn, old, "tether.hub.v1.ObjectService.List",
		map[string]any{"api_version": "apps/v1", "kind": "Deployment", "namespace": "default"})
	if n := listed.Get(field(listed, "objects")).List().Len(); n != 1 {
		t.Errorf("List = %v; want the nginx Deployment", listed)
	}

	template := map[string]any{"api_version": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx"}
	// The policy claims the template shortly after the apply.
	var got *dynamicpb.Message
	err = proc.Poll(ctx, 50*time.Millisecond, func(context.Context) error {
		got = call(ctx, t, conn, old, "tether.hub.v1.PlacementService.GetPlacement", map[string]any{"template": template})
		placement := got.Get(field(got, "placement")).Message()
		policy := placement.Get(field(placement, "policy")).Message()
		if name := policy.Get(field(policy, "name")).String(); name != "nginx" {
			return fmt.Errorf("GetPlacement = %v; want policy nginx", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	watched := watchFirst(ctx, t, conn, old, template)
	if typ := watched.Get(field(watched, "type")).Enum(); typ != 1 {
		t.Errorf("WatchPlacement's first message = %v; want EVENT_TYPE_ADDED", watched)
	}
}

// loadContract reads the previous release's descriptors.
func loadContract(t *testing.T) *protoregistry.Files {
	t.Helper()
	data, err := os.ReadFile(previousContract)
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		t.Fatalf("%s: %v", previousContract, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		t.Fatalf("%s: %v", previousContract, err)
	}
	return files
}

// dialAdmin connects with the credentials of the hub's admin.conf.
func dialAdmin(t *testing.T, path string) *grpc.ClientConn {
	t.Helper()
	cfg, err := clientconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := cfg.TLS()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(cfg.Server, grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// method finds a method of the old contract.
func method(t *testing.T, files *protoregistry.Files, name protoreflect.FullName) protoreflect.MethodDescriptor {
	t.Helper()
	d, err := files.FindDescriptorByName(name)
	if err != nil {
		t.Fatalf("the previous release's contract: %v", err)
	}
	return d.(protoreflect.MethodDescriptor)
}

// call makes a unary call of the old contract with a request set from
// fields (by proto field name; nested maps are messages) and returns the
// response as the old contract decodes it, retrying while the hub starts.
func call(ctx context.Context, t *testing.T, conn *grpc.ClientConn, files *protoregistry.Files, name protoreflect.FullName, fields map[string]any) *dynamicpb.Message {
	t.Helper()
	m := method(t, files, name)
	req := build(t, m.Input(), fields)
	resp := dynamicpb.NewMessage(m.Output())
	path := "/" + string(m.Parent().FullName()) + "/" + string(m.Name())
	var err error
	for ctx.Err() == nil {
		if err = conn.Invoke(ctx, path, req, resp, grpc.WaitForReady(true)); err == nil {
			return resp
		}
		time.Sleep(200 * time.Millisecond) // the hub may still be starting
	}
	t.Fatalf("%s with the previous release's messages: %v", name, err)
	return nil
}

// watchFirst opens WatchPlacement with the old contract's messages and
// returns its first message.
func watchFirst(ctx context.Context, t *testing.T, conn *grpc.ClientConn, files *protoregistry.Files, template map[string]any) *dynamicpb.Message {
	t.Helper()
	m := method(t, files, "tether.hub.v1.PlacementService.WatchPlacement")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/tether.hub.v1.PlacementService/WatchPlacement")
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.SendMsg(build(t, m.Input(), map[string]any{"template": template})); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	msg := dynamicpb.NewMessage(m.Output())
	if err := stream.RecvMsg(msg); err != nil {
		t.Fatalf("WatchPlacement with the previous release's messages: %v", err)
	}
	return msg
}

// build makes a message of descriptor d from fields.
func build(t *testing.T, d protoreflect.MessageDescriptor, fields map[string]any) *dynamicpb.Message {
	t.Helper()
	msg := dynamicpb.NewMessage(d)
	for k, v := range fields {
		f := d.Fields().ByName(protoreflect.Name(k))
		if f == nil {
			t.Fatalf("%s of the previous release has no field %s", d.FullName(), k)
		}
		switch v := v.(type) {
		case map[string]any:
			msg.Set(f, protoreflect.ValueOfMessage(build(t, f.Message(), v)))
		default:
			msg.Set(f, protoreflect.ValueOf(v))
		}
	}
	return msg
}

// field finds a field of msg's (old) descriptor by name.
func field(msg protoreflect.Message, name string) protoreflect.FieldDescriptor {
	f := msg.Descriptor().Fields().ByName(protoreflect.Name(name))
	if f == nil {
		panic("the previous release's " + string(msg.Descriptor().FullName()) + " has no field " + name)
	}
	return f
}
