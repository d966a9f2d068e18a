package agentapi_test

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/pki"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
)

func TestConnectRefusesWhatIsNotAnAgentCertificate(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	h.works.Set([]string{"alice", "admin"}, work("secret", "1"))
	tests := []struct {
		name     string
		id       *pki.Identity
		wantCode codes.Code
		wantMsg  string
	}{
		{"viewer certificate", &pki.Identity{Name: "alice", Kind: pki.KindViewer}, codes.PermissionDenied, `certificate of viewer "alice" is not an agent's`},
		{"admin certificate", &pki.Identity{Name: "admin", Kind: pki.KindAdmin}, codes.PermissionDenied, `certificate of admin "admin" is not an agent's`},
		{"no certificate", nil, codes.Unauthenticated, "no verified client certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := openStream(t, h.dial(t, tt.id), nil) // refused before any message is read
			m, err := a.stream.Recv()
			if status.Code(err) != tt.wantCode || !strings.Contains(status.Convert(err).Message(), tt.wantMsg) {
				t.Errorf("Connect = %v, %v; want %s with %q", describe(m), err, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestCertificateOfAnotherCAIsRefused(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	otherCA, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	forged, err := otherCA.IssueClient(pki.Identity{Name: "edge-1", Kind: pki.KindAgent}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(forged.CertPEM, forged.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	creds := credentials.NewTLS(&tls.Config{RootCAs: h.ca.Pool(), ServerName: "127.0.0.1", Certificates: []tls.Certificate{cert}})
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := agentv1.NewAgentServiceClient(conn).Connect(t.Context())
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.Unavailable {
		t.Errorf("Connect with an agent certificate of another CA = %v; want the TLS handshake refused (Unavailable)", err)
	}
}

func TestRegisterIsNotImplementedYet(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	_, err := agentv1.NewAgentServiceClient(h.dial(t, nil)).Register(t.Context(), &agentv1.RegisterRequest{ClusterName: "edge-1"})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("Register = %v; want Unimplemented", err)
	}
}
