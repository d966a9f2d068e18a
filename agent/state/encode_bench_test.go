package state

import (
	"context"
	"fmt"
	"testing"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// discard is a Backend that keeps nothing: the benchmarks below measure
// what the Store spends before the backend's I/O.
type discard struct{}

func (discard) ReadAll(context.Context) (map[string][]byte, error) { return map[string][]byte{}, nil }
func (discard) Write(context.Context, string, []byte) error        { return nil }
func (discard) Delete(context.Context, string) error               { return nil }
func (discard) Where(name string) string                           { return name }

// BenchmarkPutWork encodes the record of one work of a 2 KiB Deployment:
// an agent writes one per work it receives (a million of them in make
// load-million, issue 16).
func BenchmarkPutWork(b *testing.B) {
	s := New(discard{})
	w := Work{Key: "apps/Deployment/bench/web", Version: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		Manifests: [][]byte{benchDeployment()},
		Options:   &agentv1.ApplyOptions{DeletionPolicy: agentv1.DeletionPolicy_DELETION_POLICY_DELETE},
		Binding:   &agentv1.BindingReference{Namespace: "bench", Name: "web-deployment", Uid: "8c5e2c4e-5d7f-4f0e-9a57-3d1f0c7d2b11"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.PutWork(ctx, Held{Work: w, Hub: "hub-a"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutDigests encodes the status digests of 1,000 works: the state
// writer stores them all every few seconds while they change.
func BenchmarkPutDigests(b *testing.B) {
	s := New(discard{})
	d := map[string]Digest{}
	for i := range 1000 {
		d[fmt.Sprintf("core/ConfigMap/default/load-w-%05d", i)] = Digest{
			Version: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			Digest:  "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.PutDigests(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
}

func benchDeployment() []byte {
	env := ""
	for i := range 40 {
		env += fmt.Sprintf(`{"name":"VAR_%02d","value":"some value of the variable %02d"},`, i, i)
	}
	return []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"bench","labels":{"app":"web"}},` +
		`"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},` +
		`"spec":{"containers":[{"name":"nginx","image":"nginx:1.25","env":[` + env[:len(env)-1] + `]}]}}}}`)
}
