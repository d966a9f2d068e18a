package security

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// roleCases are calls made with a credential that does not allow them: a
// viewer's writes, calls without a certificate, an agent's certificate on
// the client API (TestViewerReadsOnly checks the same through tetherctl).
func roleCases() []hostileCase {
	viewerRef := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}
	const denied, readOnly = codes.PermissionDenied, "read-only"
	return []hostileCase{
		{"viewer Apply", func(t *testing.T, e *hostileEnv) error {
			_, err := hubv1.NewObjectServiceClient(e.viewer).Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(webYAML)})
			return err
		}, denied, []string{readOnly}},
		{"viewer Delete", func(t *testing.T, e *hostileEnv) error {
			_, err := hubv1.NewObjectServiceClient(e.viewer).Delete(rpcCtx(t), &hubv1.DeleteRequest{Ref: viewerRef})
			return err
		}, denied, []string{readOnly}},
		{"viewer CreateToken", func(t *testing.T, e *hostileEnv) error {
			_, err := hubv1.NewTokenServiceClient(e.viewer).CreateToken(rpcCtx(t), &hubv1.CreateTokenRequest{})
			return err
		}, denied, []string{readOnly}},
		{"viewer ListTokens", func(t *testing.T, e *hostileEnv) error {
			_, err := hubv1.NewTokenServiceClient(e.viewer).ListTokens(rpcCtx(t), &hubv1.ListTokensRequest{})
			return err
		}, denied, []string{readOnly}},
		{"viewer creates an admin", func(t *testing.T, e *hostileEnv) error {
			_, err := hubv1.NewUserServiceClient(e.viewer).CreateUser(rpcCtx(t), &hubv1.CreateUserRequest{Name: "eve", Role: hubv1.Role_ROLE_ADMIN})
			return err
		}, denied, []string{readOnly}},
		{"viewer removes a cluster", func(t *testing.T, e *hostileEnv) error {
			_, err := hubv1.NewClusterServiceClient(e.viewer).Remove(rpcCtx(t), &hubv1.RemoveRequest{Name: bystanderCluster})
			return err
		}, denied, []string{readOnly}},
		{"Get without a certificate", func(t *testing.T, e *hostileEnv) error {
			_, err := hubv1.NewObjectServiceClient(e.anonymous(t)).Get(rpcCtx(t), &hubv1.GetRequest{Ref: viewerRef})
			return err
		}, codes.Unauthenticated, []string{"certificate"}},
		{"CreateToken without a certificate", func(t *testing.T, e *hostileEnv) error {
			_, err := hubv1.NewTokenServiceClient(e.anonymous(t)).CreateToken(rpcCtx(t), &hubv1.CreateTokenRequest{})
			return err
		}, codes.Unauthenticated, []string{"certificate"}},
		{"agent's certificate on the client API", func(t *testing.T, e *hostileEnv) error {
			_, err := hubv1.NewObjectServiceClient(dial(t, e.h.addr, e.hostile.tlsConfig(t))).Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(webYAML)})
			return err
		}, codes.PermissionDenied, []string{"agent"}},
	}
}

// tokenSource is the address token attacks register from: their
// registrations use none of 127.0.0.1's rate limit, which the flood spends.
const tokenSource = "127.0.0.3"

// tokenCases are registrations with a token that must not work (as
// TestTokensRefused, against the suite's hub).
func tokenCases() []hostileCase {
	registerWith := func(tok func(t *testing.T, e *hostileEnv) string) func(*testing.T, *hostileEnv) error {
		return func(t *testing.T, e *hostileEnv) error {
			_, err := registerFrom(t, e.h, token{Token: tok(t, e), CAHash: e.tok.CAHash}, "edge-tok", nil, tokenSource)
			return err
		}
	}
	return []hostileCase{
		{"Register with a used single-use token", registerWith(func(t *testing.T, e *hostileEnv) string {
			tok := e.newToken(t, &hubv1.CreateTokenRequest{Uses: 1})
			if _, err := registerFrom(t, e.h, token{Token: tok, CAHash: e.tok.CAHash}, "edge-once", nil, tokenSource); err != nil {
				t.Fatalf("first use of a single-use token: %v", err)
			}
			return tok
		}), codes.Unauthenticated, []string{"used up"}},
		{"Register with an expired token", registerWith(func(t *testing.T, e *hostileEnv) string {
			tok := e.newToken(t, &hubv1.CreateTokenRequest{Ttl: durationpb.New(time.Second)})
			time.Sleep(1100 * time.Millisecond) // the only way for a token to expire: its ttl passing
			return tok
		}), codes.Unauthenticated, []string{"expired"}},
		{"Register with a deleted token", registerWith(func(t *testing.T, e *hostileEnv) string {
			tok := e.newToken(t, &hubv1.CreateTokenRequest{})
			if _, err := hubv1.NewTokenServiceClient(e.admin).DeleteToken(rpcCtx(t), &hubv1.DeleteTokenRequest{Id: strings.Split(tok, ".")[0]}); err != nil {
				t.Fatal(err)
			}
			return tok
		}), codes.Unauthenticated, []string{"unknown token"}},
		{"Register with a token's wrong secret", registerWith(func(t *testing.T, e *hostileEnv) string {
			return strings.Split(e.tok.Token, ".")[0] + ".0000000000000000"
		}), codes.Unauthenticated, []string{"wrong secret"}},
		{"Register with another cluster's token", registerWith(func(t *testing.T, e *hostileEnv) string {
			return e.newToken(t, &hubv1.CreateTokenRequest{ClusterName: "edge-9"})
		}), codes.Unauthenticated, []string{"only cluster"}},
		// The refused key stays pending for the bystander (a pending key is
		// never replaced): it is rejected again, so that the bystander is
		// left as it was and a later registration for it meets no pending
		// key; the bystander's own stream and certificate go on meanwhile
		// (the probe's heartbeats).
		{"Register a taken name with a new key", func(t *testing.T, e *hostileEnv) error {
			_, err := registerFrom(t, e.h, e.tok, bystanderCluster, nil, tokenSource)
			if fp := e.pendingFingerprint(t, bystanderCluster); fp != "" {
				if _, rerr := hubv1.NewClusterServiceClient(e.admin).RejectKey(rpcCtx(t), &hubv1.RejectKeyRequest{Name: bystanderCluster, KeyFingerprint: fp}); rerr != nil {
					t.Errorf("reject the key left pending for %s: %v", bystanderCluster, rerr)
				}
			} else if err != nil {
				t.Errorf("the refused key is not pending for %s; want its fingerprint shown for approval", bystanderCluster)
			}
			return err
		}, codes.FailedPrecondition, []string{"approve"}},
		{"Connect with a removed cluster's certificate", func(t *testing.T, e *hostileEnv) error {
			reg, err := registerFrom(t, e.h, e.tok, "doomed", nil, tokenSource)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := hubv1.NewClusterServiceClient(e.admin).Remove(rpcCtx(t), &hubv1.RemoveRequest{Name: "doomed"}); err != nil {
				t.Fatal(err)
			}
			return e.agentExchange(t, reg.tlsConfig(t), hello(nil))
		}, codes.PermissionDenied, []string{"doomed"}},
	}
}

// newToken creates a bootstrap token as the admin.
func (e *hostileEnv) newToken(t *testing.T, req *hubv1.CreateTokenRequest) string {
	t.Helper()
	resp, err := hubv1.NewTokenServiceClient(e.admin).CreateToken(rpcCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetToken()
}

// anonymous is a connection that trusts the hub but shows no certificate.
func (e *hostileEnv) anonymous(t *testing.T) *grpc.ClientConn {
	tc := userTLS(t, e.viewerConf)
	tc.Certificates = nil
	return dial(t, e.h.addr, tc)
}
