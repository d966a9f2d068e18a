package memberproxy

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"k8s.io/apimachinery/pkg/util/proxy"

	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/internal/memberreq"
)

// Authorizer is the client API's decision for the hub's doors
// (clientapi.Server.AuthorizeDoor): the caller's identity and grant, and
// whether it may v target.
type Authorizer interface {
	AuthorizeDoor(ctx context.Context, v roles.Verb, target roles.Target) (pki.Identity, roles.Grant, error)
}

// Revocations says whether a user's certificate was revoked
// (hub/revocation.List).
type Revocations interface {
	Check(ctx context.Context, cert *x509.Certificate) error
}

// Handler serves every member's API at PathPrefix + NAME + "/proxy/":
// it authenticates the user by client certificate, applies the hub's role
// gate (Authorizer: roles.Decide on the request's verb and namespace),
// bounds it, writes one audit line, and forwards it through a tunnel to
// the cluster's agent, as the user, by impersonation headers.
type Handler struct {
	tunnels   *Tunnels
	auth      Authorizer
	revoked   Revocations
	gate      *gate
	transport *http.Transport
	recheck   time.Duration
	log       hclog.Logger
}

// NewHandler returns the proxy handler over tunnels.
func NewHandler(tunnels *Tunnels, auth Authorizer, revoked Revocations, limits Limits, logger hclog.Logger) *Handler {
	limits = limits.WithDefaults()
	h := &Handler{tunnels: tunnels, auth: auth, revoked: revoked, gate: newGate(limits), recheck: limits.RecheckInterval,
		log: logger.Named("memberproxy")}
	// One tunnel per request (no keep-alive): a tunnel carries one user's
	// session, bounded and accounted as that user's.
	h.transport = &http.Transport{DialContext: h.dial, DisableKeepAlives: true, ForceAttemptHTTP2: false}
	return h
}

// sessionKey is the context key of a request's session, for dial.
type sessionKey struct{}

// dial opens the tunnel of the request's session.
func (h *Handler) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	s, _ := ctx.Value(sessionKey{}).(*session)
	if s == nil {
		return nil, errors.New("memberproxy: dial outside a proxied request")
	}
	c, err := h.tunnels.Dial(ctx, s.cluster)
	if err != nil {
		return nil, err
	}
	return s.wrap(c), nil
}

// ServeHTTP serves one proxied request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &memberreq.Recorder{ResponseWriter: w}
	a, code, err := h.admit(r)
	// Deferred: the reverse proxy aborts a response cut mid-stream by
	// panicking with http.ErrAbortHandler.
	defer func() { h.audit(r, a, rec.Code, time.Since(start), err) }()
	if err != nil {
		memberreq.WriteStatus(rec, code, err.Error())
		return
	}
	h.forward(rec, r, a)
}

// admitted is a request the hub lets through.
type admitted struct {
	id         pki.Identity
	grant      roles.Grant
	cluster    string
	memberPath string
	req        memberreq.Info
	s          *session
}

// admit decides whether the request goes through: the route, the user,
// the role gate, the bounds. The status code goes with the error.
func (h *Handler) admit(r *http.Request) (*admitted, int, error) {
	cluster, memberPath, ok := route(r.URL.Path)
	if !ok {
		return nil, http.StatusNotFound, fmt.Errorf("not a member proxy path; use %sNAME/proxy/...", PathPrefix)
	}
	a := &admitted{cluster: cluster, memberPath: memberPath}
	for name := range r.Header {
		if strings.HasPrefix(http.CanonicalHeaderKey(name), "Impersonate-") {
			return a, http.StatusForbidden, fmt.Errorf("the member proxy does not forward %s (kubectl --as): the member sees you as %s<your user>", name, memberreq.UserPrefix)
		}
	}
	member := r.Clone(r.Context())
	member.URL.Path, member.URL.RawPath = memberPath, ""
	var err error
	if a.req, err = memberreq.Classify(member); err != nil {
		return a, http.StatusBadRequest, err
	}
	if a.id, a.grant, err = h.authorize(member, a.req); err != nil {
		if errors.Is(err, clientapi.ErrPermissionDenied) {
			return a, http.StatusForbidden, fmt.Errorf("%v (%s %s on cluster %s)", err, a.req.Verb, a.req.Resource, cluster)
		}
		return a, http.StatusUnauthorized, err
	}
	if a.s, err = h.gate.acquire(a.id.Name, cluster); err != nil {
		return a, http.StatusTooManyRequests, err
	}
	return a, 0, nil
}

// authorize authenticates the request's client certificate and asks the
// client API's decision (roles.Decide) whether the user may read or write
// (memberreq's ReadOnly) in the request's namespace: reads of a namespace
// need a role there, writes (exec, port-forward, ...) an editor or admin
// there; cluster-scoped and all-namespaces requests a fleet-wide role
// (a fleet-wide admin to write); discovery and /version any role.
// Revoked users are refused.
func (h *Handler) authorize(r *http.Request, req memberreq.Info) (pki.Identity, roles.Grant, error) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		return pki.Identity{}, roles.Grant{}, fmt.Errorf("%w: no verified client certificate; use the kubeconfig `tetherctl kubeconfig` writes", clientapi.ErrUnauthenticated)
	}
	ctx := peer.NewContext(r.Context(), &peer.Peer{Addr: tcpAddr(r.RemoteAddr), AuthInfo: credentials.TLSInfo{State: *r.TLS}})
	if err := h.revoked.Check(ctx, r.TLS.PeerCertificates[0]); err != nil {
		return pki.Identity{}, roles.Grant{}, fmt.Errorf("%w: %v", clientapi.ErrUnauthenticated, err)
	}
	v, target := roles.Write, roles.Target{Kind: req.Resource, Namespace: req.Namespace}
	if req.ReadOnly {
		v = roles.Read
	}
	if req.Resource == "" { // discovery, /version, /openapi: any role reads them
		target.Kind = r.URL.Path
		if req.ReadOnly {
			target.Namespace = roles.AnyNamespace
		}
	}
	return h.auth.AuthorizeDoor(ctx, v, target)
}

// forward sends the request through a tunnel, as the user.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, a *admitted) {
	defer a.s.release()
	done := make(chan struct{})
	defer close(done)
	go h.follow(r, a, done)
	out := r.Clone(context.WithValue(r.Context(), sessionKey{}, a.s))
	for name := range out.Header {
		if k := http.CanonicalHeaderKey(name); k == "Authorization" || strings.HasPrefix(k, "X-Remote-") {
			out.Header.Del(name)
		}
	}
	out.Header.Set("Impersonate-User", memberreq.UserPrefix+a.id.Name)
	out.Header["Impersonate-Group"] = []string{memberreq.UsersGroup, memberreq.RoleGroupPrefix + string(a.grant.Role)}
	// The query goes in the location: the upgrade path takes it from there.
	loc := &url.URL{Scheme: "http", Host: a.cluster, Path: a.memberPath, RawQuery: r.URL.RawQuery}
	p := proxy.NewUpgradeAwareHandler(loc, h.transport, false, false, responder{})
	p.UseLocationHost = true
	p.FlushInterval = 0 // stream at once: logs -f, watch
	p.ServeHTTP(w, out)
}

// follow decides again, every RecheckInterval while the session lasts,
// whether its user may still do what it does, and ends the session when a
// revocation or a role change no longer allows it: an exec, a log follow
// or a watch does not outlive the user's right to open it.
func (h *Handler) follow(r *http.Request, a *admitted, done <-chan struct{}) {
	t := time.NewTicker(h.recheck)
	defer t.Stop()
	member := r.Clone(r.Context())
	member.URL.Path, member.URL.RawPath = a.memberPath, ""
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if _, _, err := h.authorize(member, a.req); err != nil {
			h.log.Info("proxied session ended: its user may no longer do it", "cluster", a.cluster, "user", a.id.Name,
				"verb", a.req.Verb, "resource", a.req.Resource, "namespace", a.req.Namespace, "reason", err)
			a.s.end()
			return
		}
	}
}

// audit writes the request's one audit line.
func (h *Handler) audit(r *http.Request, a *admitted, code int, took time.Duration, refused error) {
	kv := []any{"method", r.Method, "path", r.URL.Path, "code", code, "took", took.Round(time.Millisecond)}
	if a != nil {
		kv = append(kv, "cluster", a.cluster, "user", a.id.Name, "role", a.grant.String(), "verb", a.req.Verb,
			"resource", a.req.Resource, "namespace", a.req.Namespace)
		if a.s != nil {
			kv = append(kv, "bytes_in", a.s.in.Load(), "bytes_out", a.s.out.Load())
		}
	}
	if refused != nil {
		kv = append(kv, "refused", refused.Error())
	}
	h.log.Info("proxied request", kv...)
}

// responder writes the proxy's errors (no tunnel, a timeout) as a
// Kubernetes Status, which kubectl prints.
type responder struct{}

func (responder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	code := http.StatusBadGateway
	switch {
	case errors.Is(err, ErrNoAgent):
		code = http.StatusServiceUnavailable
	case errors.Is(err, ErrOpenTimeout):
		code = http.StatusGatewayTimeout
	case errors.Is(err, ErrBusy):
		code = http.StatusTooManyRequests
	}
	memberreq.WriteStatus(w, code, err.Error())
}

// tcpAddr parses a request's RemoteAddr for the peer.
func tcpAddr(s string) net.Addr {
	a, err := net.ResolveTCPAddr("tcp", s)
	if err != nil {
		return nil
	}
	return a
}
