package hubclient

import (
	"os"
	"testing"

	"github.com/tetherproj/tether/internal/leakcheck"
)

// TestMain fails the package when goroutines of the client, the fake hub
// or gRPC's transport outlive the tests.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, leakcheck.Filter{Only: []string{"tether/agent/", "grpc/internal/transport"}}))
}
