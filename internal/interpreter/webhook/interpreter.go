package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// maxResponseBytes bounds a webhook response body, in bytes.
const maxResponseBytes = 16 << 20

// Interpreter calls interpreter webhooks. Configurations are added and
// removed at runtime; lookups take no lock.
type Interpreter struct {
	// mu serialises writers of configs and hooks.
	mu      sync.Mutex
	configs map[string]Configuration
	// hooks are all webhooks sorted by uid, replaced as a whole.
	hooks atomic.Pointer[[]*hook]
	// newUID makes request UIDs; replaceable in tests.
	newUID func() string
}

// hook is one webhook, ready to call.
type hook struct {
	uid     string // "<configName>/<webhookName>"
	spec    configv1alpha1.ResourceInterpreterWebhook
	url     string
	client  *http.Client
	version string
}

// New returns an Interpreter with no configurations.
func New() *Interpreter {
	w := &Interpreter{configs: map[string]Configuration{}, newUID: randomUID}
	w.hooks.Store(&[]*hook{})
	return w
}

// Apply adds or replaces a configuration. An invalid one (no URL or service,
// unusable caBundle, timeout out of range, unknown context versions only) is
// refused and the previous one, if any, kept.
func (w *Interpreter) Apply(cfg Configuration) error {
	if cfg.Name == "" {
		return errors.New("webhook configuration: metadata.name is required")
	}
	for _, h := range cfg.Webhooks {
		if _, err := newHook(cfg.Name, h); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.configs[cfg.Name] = cfg
	w.rebuild()
	return nil
}

// Remove deletes the configuration with that name, if any.
func (w *Interpreter) Remove(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.configs, name)
	w.rebuild()
}

// rebuild recomputes the sorted hooks; w.mu must be held.
func (w *Interpreter) rebuild() {
	var hooks []*hook
	for name, cfg := range w.configs {
		for _, spec := range cfg.Webhooks {
			h, err := newHook(name, spec)
			if err != nil {
				continue // validated by Apply
			}
			hooks = append(hooks, h)
		}
	}
	sort.Slice(hooks, func(i, j int) bool { return hooks[i].uid < hooks[j].uid })
	w.hooks.Store(&hooks)
}

func newHook(config string, spec configv1alpha1.ResourceInterpreterWebhook) (*hook, error) {
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
	client := &http.Client{
		Timeout:   time.Duration(timeout) * time.Second,
		Transport: &http.Transport{TLSClientConfig: tlsCfg, ForceAttemptHTTP2: true, IdleConnTimeout: 90 * time.Second},
	}
	return &hook{uid: uid, spec: spec, url: u, client: client, version: version}, nil
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

// call sends req to h and returns the verified response.
func (w *Interpreter) call(ctx context.Context, h *hook, req *Request) (*Response, error) {
	body, err := json.Marshal(Context{
		TypeMeta: typeMeta(),
		Request:  req,
	})
	if err != nil {
		return nil, fmt.Errorf("webhook %s: encode request: %w", h.uid, err)
	}
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("webhook %s: %w", h.uid, err)
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Accept", "application/json")
	resp, err := h.client.Do(httpReq)
	if err != nil {
		return nil, fmt.Errorf("webhook %s: call: %w", h.uid, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("webhook %s: read response: %w", h.uid, err)
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("webhook %s: response larger than %d bytes", h.uid, maxResponseBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("webhook %s: HTTP status %d: %.200s", h.uid, resp.StatusCode, data)
	}
	var out Context
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("webhook %s: decode response: %w", h.uid, err)
	}
	if err := verify(req, out.Response); err != nil {
		return nil, fmt.Errorf("webhook %s: %w", h.uid, err)
	}
	return out.Response, nil
}
