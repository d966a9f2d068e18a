package clientapi

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/hub/store"
)

// fleetAdmin is the caller of the tests that call the backend directly.
var fleetAdmin = caller{id: pki.Identity{Name: "test-admin", Kind: pki.KindAdmin}, grant: roles.Grant{Role: roles.Admin}}

// readsAll is WatchPlacements' filter of a caller who may read every
// template.
func readsAll(store.ObjectRef) bool { return true }

// clientAPIFiles are the client API's generated files: every service the
// hub registers for users (Register) is in one of them.
var clientAPIFiles = []protoreflect.FileDescriptor{
	hubv1.File_tether_hub_v1_object_proto, hubv1.File_tether_hub_v1_placement_proto,
	hubv1.File_tether_hub_v1_cluster_proto, hubv1.File_tether_hub_v1_token_proto,
	hubv1.File_tether_hub_v1_user_proto, hubv1.File_tether_hub_v1_rollout_proto,
}

// clientAPIMethods are the full gRPC names of every method of the client
// API, from the generated service descriptors.
func clientAPIMethods() []string {
	var out []string
	for _, f := range clientAPIFiles {
		for i := 0; i < f.Services().Len(); i++ {
			s := f.Services().Get(i)
			for j := 0; j < s.Methods().Len(); j++ {
				out = append(out, "/"+string(s.FullName())+"/"+string(s.Methods().Get(j).Name()))
			}
		}
	}
	return out
}

// TestEveryMethodHasARule: every method of the generated services has an
// authorization rule, and every rule names a method that exists, so that a
// method added to a .proto fails here until its rule is written (authorize
// refuses it meanwhile). TestEveryMethodRefusesAUserWithoutRole shows each
// handler calls authorize.
func TestEveryMethodHasARule(t *testing.T) {
	methods := clientAPIMethods()
	if len(methods) < 28 {
		t.Fatalf("found %d methods in the service descriptors; want at least the 28 of this writing", len(methods))
	}
	seen := map[string]bool{}
	for _, m := range methods {
		seen[m] = true
		if _, ok := methodRules[m]; !ok {
			t.Errorf("method %s has no authorization rule in methodRules", m)
		}
	}
	for m := range methodRules {
		if !seen[m] {
			t.Errorf("methodRules names %s, which no service has", m)
		}
	}
}
