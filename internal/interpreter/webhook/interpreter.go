package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// Bounds of a webhook call.
const (
	// maxResponseBytes bounds a webhook response body, in bytes.
	maxResponseBytes = 16 << 20
	// maxResponseHeaderBytes bounds a webhook response's headers, in bytes.
	maxResponseHeaderBytes = 64 << 10
	// idleConnTimeout is how long an idle connection to a webhook is kept.
	idleConnTimeout = 90 * time.Second
)

// Options configure an Interpreter.
type Options struct {
	// Policy says which addresses webhooks may be called at; the zero
	// Policy denies loopback, link-local and cloud metadata addresses.
	Policy Policy
}

// Interpreter calls interpreter webhooks. Configurations are added and
// removed at runtime; lookups take no lock.
type Interpreter struct {
	policy Policy
	// mu serialises writers of configs, refused and hooks.
	mu      sync.Mutex
	configs map[string]Configuration
	// refused are why the configurations of those names are never called
	// (Refuse).
	refused map[string]error
	// hooks are all webhooks sorted by uid, replaced as a whole.
	hooks atomic.Pointer[[]*hook]
	// newUID makes request UIDs; replaceable in tests.
	newUID func() string
	// now is the breakers' clock; replaceable in tests.
	now func() time.Time
	// probeCtx is the lifetime of background probes (call.go), cancelled
	// by Close: an owner's context, not a request's.
	probeCtx   context.Context
	stopProbes context.CancelFunc
	// probeMu guards closed and additions to probes, so that Close's Wait
	// never races an Add.
	probeMu sync.Mutex
	closed  bool
	probes  sync.WaitGroup
}

// hook is one webhook, ready to call.
type hook struct {
	uid     string // "<configName>/<webhookName>"
	spec    configv1alpha1.ResourceInterpreterWebhook
	url     string
	client  *http.Client
	version string
	breaker *breaker
	// refused, when set, fails every call at once: nothing is sent (Refuse).
	refused error
}

// New returns an Interpreter with no configurations.
func New(opts Options) *Interpreter {
	w := &Interpreter{policy: opts.Policy, configs: map[string]Configuration{}, refused: map[string]error{}, newUID: randomUID, now: time.Now}
	w.probeCtx, w.stopProbes = context.WithCancel(context.Background())
	w.hooks.Store(&[]*hook{})
	return w
}

// Close stops the background probes of half-open breakers and waits for
// them; afterwards no probe starts. Without Close a probe still ends
// within its webhook's timeout.
func (w *Interpreter) Close() {
	w.probeMu.Lock()
	w.closed = true
	w.probeMu.Unlock()
	w.stopProbes()
	w.probes.Wait()
}

// Apply adds or replaces a configuration. An invalid one (no URL or service,
// unusable caBundle, timeout out of range, unknown context versions only) is
// refused and the previous one, if any, kept.
func (w *Interpreter) Apply(cfg Configuration) error {
	if cfg.Name == "" {
		return errors.New("webhook configuration: metadata.name is required")
	}
	for _, h := range cfg.Webhooks {
		if _, err := w.newHook(cfg.Name, h); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.configs[cfg.Name] = cfg
	delete(w.refused, cfg.Name)
	w.rebuild()
	return nil
}

// Refuse adds or replaces a configuration whose webhooks are never
// called, because why (a member's owner refused them): their rules still
// select objects and operations as Apply's would, so that no later step
// answers in their place, and every call of them fails at once with an
// error wrapping why. Nothing is validated but the name: nothing is sent.
func (w *Interpreter) Refuse(cfg Configuration, why error) error {
	if cfg.Name == "" {
		return errors.New("webhook configuration: metadata.name is required")
	}
	if why == nil {
		return fmt.Errorf("webhook configuration %s: refused without a reason", cfg.Name)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.configs[cfg.Name] = cfg
	w.refused[cfg.Name] = why
	w.rebuild()
	return nil
}

// Remove deletes the configuration with that name, if any.
func (w *Interpreter) Remove(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.configs, name)
	delete(w.refused, name)
	w.rebuild()
}

// rebuild recomputes the sorted hooks; w.mu must be held. A webhook whose
// spec and refusal did not change keeps its hook: its connections and its
// breaker (a resync does not close an open breaker; a changed spec starts
// closed).
func (w *Interpreter) rebuild() {
	old := map[string]*hook{}
	for _, h := range *w.hooks.Load() {
		old[h.uid] = h
	}
	var hooks []*hook
	for name, cfg := range w.configs {
		why := w.refused[name]
		for _, spec := range cfg.Webhooks {
			if h, ok := old[name+"/"+spec.Name]; ok && h.refused == why && reflect.DeepEqual(h.spec, spec) {
				hooks = append(hooks, h)
				continue
			}
			if why != nil {
				hooks = append(hooks, &hook{uid: name + "/" + spec.Name, spec: spec, refused: why, breaker: &breaker{}})
				continue
			}
			h, err := w.newHook(name, spec)
			if err != nil {
				continue // validated by Apply
			}
			hooks = append(hooks, h)
		}
	}
	sort.Slice(hooks, func(i, j int) bool { return hooks[i].uid < hooks[j].uid })
	w.hooks.Store(&hooks)
}

func (w *Interpreter) newHook(config string, spec configv1alpha1.ResourceInterpreterWebhook) (*hook, error) {
	uid := config + "/" + spec.Name
	timeout := configv1alpha1.DefaultWebhookTimeoutSeconds
	if spec.TimeoutSeconds != nil {
		timeout = *spec.TimeoutSeconds
	}
	if timeout < configv1alpha1.MinWebhookTimeoutSeconds || timeout > configv1alpha1.MaxWebhookTimeoutSeconds {
		return nil, fmt.Errorf("webhook %s: timeoutSeconds %d is not in [%d, %d]", uid, timeout,
			configv1alpha1.MinWebhookTimeoutSeconds, configv1alpha1.MaxWebhookTimeoutSeconds)
	}
	version := ""
	for _, v := range spec.InterpreterContextVersions {
		if v == ContextVersion {
			version = v
			break
		}
	}
	if version == "" {
		return nil, fmt.Errorf("webhook %s: none of the interpreterContextVersions %v is supported (want %s)", uid, spec.InterpreterContextVersions, ContextVersion)
	}
	u, err := hookURL(spec)
	if err != nil {
		return nil, fmt.Errorf("webhook %s: %w", uid, err)
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(spec.ClientConfig.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(spec.ClientConfig.CABundle) {
			return nil, fmt.Errorf("webhook %s: caBundle holds no PEM certificate", uid)
		}
		tlsCfg.RootCAs = pool
	}
	client := newClient(time.Duration(timeout)*time.Second, tlsCfg, w.policy)
	return &hook{uid: uid, spec: spec, url: u, client: client, version: version, breaker: &breaker{}}, nil
}

// newClient is a webhook's HTTP client: the whole call bounded by timeout,
// no redirects (a 3xx is returned as is and refused by call), no proxy
// (the policy must see the webhook's own address) and every connection
// checked against policy once its address is resolved.
func newClient(timeout time.Duration, tlsCfg *tls.Config, policy Policy) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Control: policy.control}
	return &http.Client{
		Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			TLSClientConfig:        tlsCfg,
			ForceAttemptHTTP2:      true,
			IdleConnTimeout:        idleConnTimeout,
			MaxResponseHeaderBytes: maxResponseHeaderBytes,
		},
	}
}

// hookURL is the service address when a service is set (it wins over url),
// else the url, which must be https.
func hookURL(spec configv1alpha1.ResourceInterpreterWebhook) (string, error) {
	cc := spec.ClientConfig
	if s := cc.Service; s != nil {
		port := configv1alpha1.DefaultWebhookServicePort
		if s.Port != nil {
			port = *s.Port
		}
		path := ""
		if s.Path != nil {
			path = *s.Path
		}
		return "https://" + s.Name + "." + s.Namespace + ".svc:" + strconv.Itoa(int(port)) + path, nil
	}
	if cc.URL == nil || *cc.URL == "" {
		return "", errors.New("clientConfig needs a url or a service")
	}
	u, err := url.Parse(*cc.URL)
	if err != nil {
		return "", fmt.Errorf("clientConfig.url: %w", err)
	}
	if u.Scheme != "https" {
		return "", fmt.Errorf("clientConfig.url %q: scheme must be https", *cc.URL)
	}
	return u.String(), nil
}

// find returns the first hook, by uid, whose rules match.
func (w *Interpreter) find(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) *hook {
	for _, h := range *w.hooks.Load() {
		for i := range h.spec.Rules {
			if ruleMatches(&h.spec.Rules[i], gvk, op) {
				return h
			}
		}
	}
	return nil
}

// HookEnabled reports whether some webhook matches gvk and op.
func (w *Interpreter) HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	return w.find(gvk, op) != nil
}
