package memberproxy

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/tetherproj/tether/internal/memberreq"
)

// Handler forwards the hub's requests to the member's API server as the
// hub user, after checking the identity and the mode.
type Handler struct {
	mode     Mode
	member   *url.URL
	rt       http.RoundTripper
	upgrade  proxy.UpgradeRequestRoundTripper
	sessions chan struct{} // one slot per request in flight
	log      hclog.Logger
}

// NewHandler returns the handler for the member cfg reaches, in mode;
// maxSessions bounds the requests in flight (0: memberreq.SessionsPerCluster,
// the hub's default per cluster).
func NewHandler(cfg *rest.Config, mode Mode, maxSessions int, logger hclog.Logger) (*Handler, error) {
	member, err := url.Parse(cfg.Host)
	if err != nil || member.Host == "" {
		return nil, fmt.Errorf("member API server address %q: not a URL", cfg.Host)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("member transport: %w", err)
	}
	up, err := upgradeTransport(cfg)
	if err != nil {
		return nil, err
	}
	if maxSessions <= 0 {
		maxSessions = memberreq.SessionsPerCluster
	}
	return &Handler{mode: mode, member: member, rt: rt, upgrade: up, sessions: make(chan struct{}, maxSessions), log: logger.Named("memberproxy")}, nil
}

// upgradeTransport dials the member for exec, attach and port-forward:
// HTTP/1.1 over the member's TLS, its credentials added to the upgrade
// request (as kube-apiserver's and Karmada's proxies do).
func upgradeTransport(cfg *rest.Config) (proxy.UpgradeRequestRoundTripper, error) {
	tc, err := cfg.TransportConfig()
	if err != nil {
		return nil, fmt.Errorf("member transport: %w", err)
	}
	tlsCfg, err := transport.TLSConfigFor(tc)
	if err != nil {
		return nil, fmt.Errorf("member TLS: %w", err)
	}
	conn := &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment}
	wrap, err := transport.HTTPWrappersForConfig(tc, proxy.MirrorRequest)
	if err != nil {
		return nil, fmt.Errorf("member credentials: %w", err)
	}
	return proxy.NewUpgradeRequestRoundTripper(conn, wrap), nil
}

// ServeHTTP serves one request the hub sent through a tunnel. The slot
// and the audit line are deferred: the reverse proxy aborts a response cut
// mid-stream (the hub went away) by panicking with http.ErrAbortHandler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &memberreq.Recorder{ResponseWriter: w}
	user, info, code, err := h.admit(r)
	defer func() {
		kv := []any{"user", user, "verb", info.Verb, "resource", info.Resource, "namespace", info.Namespace,
			"method", r.Method, "path", r.URL.Path, "code", rec.Code, "took", time.Since(start).Round(time.Millisecond)}
		if err != nil {
			kv = append(kv, "refused", err.Error())
		}
		h.log.Info("proxied request", kv...)
	}()
	if err != nil {
		memberreq.WriteStatus(rec, code, err.Error())
		return
	}
	defer func() { <-h.sessions }()
	h.forward(rec, r)
}

// admit checks the identity, the mode and the bound; on success the
// request holds a session slot.
func (h *Handler) admit(r *http.Request) (string, memberreq.Info, int, error) {
	user, err := checkIdentity(r.Header)
	if err != nil {
		return user, memberreq.Info{}, http.StatusForbidden, err
	}
	info, err := memberreq.Classify(r)
	if err != nil {
		return user, info, http.StatusBadRequest, err
	}
	if h.mode == ReadOnly && !info.ReadOnly {
		return user, info, http.StatusForbidden, fmt.Errorf("this cluster's owner allows only reads through the hub (tether-agent --member-proxy=read-only); %s %s is not one", info.Verb, info.Resource)
	}
	select {
	case h.sessions <- struct{}{}:
	default:
		return user, info, http.StatusTooManyRequests, fmt.Errorf("the agent has %d proxy sessions open, the most it allows", cap(h.sessions))
	}
	return user, info, 0, nil
}

// checkIdentity accepts only the identity the hub sets: one
// Impersonate-User and groups, all within memberreq.UserPrefix, nothing
// else impersonated, no credentials of the caller's own.
func checkIdentity(hdr http.Header) (string, error) {
	users := hdr.Values("Impersonate-User")
	if len(users) != 1 || !strings.HasPrefix(users[0], memberreq.UserPrefix) || len(users[0]) == len(memberreq.UserPrefix) {
		return strings.Join(users, ","), fmt.Errorf("refused: the hub must name exactly one user with the prefix %q (got %q)", memberreq.UserPrefix, users)
	}
	for _, g := range hdr.Values("Impersonate-Group") {
		if !strings.HasPrefix(g, memberreq.UserPrefix) {
			return users[0], fmt.Errorf("refused: group %q is outside the prefix %q", g, memberreq.UserPrefix)
		}
	}
	for name := range hdr {
		k := http.CanonicalHeaderKey(name)
		if k == "Authorization" || (strings.HasPrefix(k, "Impersonate-") && k != "Impersonate-User" && k != "Impersonate-Group") {
			return users[0], fmt.Errorf("refused: the agent does not forward %s", k)
		}
	}
	return users[0], nil
}

// forward sends r to the member with the agent's credentials; the
// Impersonate-* headers checked by admit go with it.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request) {
	loc := *h.member
	loc.Path = strings.TrimSuffix(loc.Path, "/") + r.URL.Path
	loc.RawQuery = r.URL.RawQuery // the upgrade path takes the query from the location
	p := proxy.NewUpgradeAwareHandler(&loc, h.rt, false, false, responder{})
	p.UpgradeTransport = h.upgrade
	p.UseLocationHost = true
	p.FlushInterval = 0
	p.ServeHTTP(w, r)
}

// responder writes a failure to reach the member as a Status.
type responder struct{}

func (responder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	memberreq.WriteStatus(w, http.StatusBadGateway, "the agent could not reach its member API server: "+err.Error())
}
