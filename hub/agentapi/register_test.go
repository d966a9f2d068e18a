package agentapi_test

import (
	"context"
	"net"
	"testing"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fromSource dials from the loopback address src (any of 127/8 is this
// host on Linux), so the hub sees src as the peer.
func fromSource(src string) grpc.DialOption {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	return grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", addr)
	})
}

func TestOneSourceCannotStarveAnothersRegistration(t *testing.T) {
	// Registrations per source: a burst of 2, then one per 1000 s.
	h := startHub(t, agentapi.Config{Registry: &registry{}, RegistrationRate: 0.001, RegistrationBurst: 2})
	register := func(conn *grpc.ClientConn) error {
		_, err := agentv1.NewAgentServiceClient(conn).Register(t.Context(), &agentv1.RegisterRequest{ClusterName: "edge-1"})
		return err
	}
	hostile := h.dial(t, nil, fromSource("127.0.0.2"))
	for i := range 2 {
		if err := register(hostile); status.Code(err) == codes.ResourceExhausted {
			t.Fatalf("registration %d of the first source = %v; want it within the burst", i+1, err)
		}
	}
	if err := register(hostile); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("third registration of the first source = %v; want ResourceExhausted", err)
	}
	if err := register(h.dial(t, nil, fromSource("127.0.0.3"))); status.Code(err) == codes.ResourceExhausted {
		t.Errorf("registration of another source = %v; want it served (the registry's own answer)", err)
	}
}
