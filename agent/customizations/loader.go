package customizations

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// MaxSetBytes bounds a set the agent accepts, in bytes of its objects:
// the hub's own bound (hub/customizations.MaxSetBytes, 1 MiB), which is
// also what a state Secret can hold.
const MaxSetBytes = 1 << 20

// Target is the interpreter the loader feeds: internal/interpreter's
// facade implements it.
type Target interface {
	LoadCustomizations(cs []configv1alpha1.ResourceInterpreterCustomization)
	ApplyWebhookConfiguration(cfg webhook.Configuration) error
	RefuseWebhookConfiguration(cfg webhook.Configuration, why error) error
	RemoveWebhookConfiguration(name string)
	// VM runs the customizations' scripts, with the agent's limits.
	VM() *luavm.VM
}

// Loader loads sets into its Target and knows the version it holds. Its
// methods are safe for concurrent use.
type Loader struct {
	target Target
	policy WebhookPolicy
	log    hclog.Logger

	mu       sync.Mutex // guards version and webhooks, and serialises Load
	version  string
	webhooks map[string]bool // the names of the configurations applied
}

// New returns a loader of target holding no set, which refuses the
// webhook configurations policy refuses.
func New(target Target, policy WebhookPolicy, logger hclog.Logger) *Loader {
	return &Loader{
		target:   target,
		policy:   policy,
		log:      logger.Named("customizations"),
		webhooks: map[string]bool{},
	}
}

// Version is the version of the set loaded last; empty before any.
func (l *Loader) Version() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.version
}

// Load validates set and loads it into the target in place of the set
// held (see the package doc). It returns one line per object it left out;
// an error means it refused the whole set and the previous one stays.
func (l *Loader) Load(ctx context.Context, set *agentv1.Customizations) ([]string, error) {
	if err := checkSize(set); err != nil {
		return nil, err
	}
	rics, refused := l.decodeCustomizations(ctx, set.GetResourceInterpreterCustomizations())
	hooks, bad := decodeWebhooks(set.GetWebhookConfigurations())
	refused = append(refused, bad...)

	l.mu.Lock()
	defer l.mu.Unlock()
	l.target.LoadCustomizations(rics)
	applied := map[string]bool{}
	for _, h := range hooks {
		loaded, err := l.loadWebhook(h)
		if err != nil {
			refused = append(refused, fmt.Sprintf("webhook configuration %s: %v", h.Name, err))
		}
		applied[h.Name] = loaded
	}
	for name := range l.webhooks {
		if !applied[name] {
			l.target.RemoveWebhookConfiguration(name)
		}
	}
	l.webhooks, l.version = applied, set.GetVersion()
	l.log.Info("customizations loaded", "version", l.version, "customizations", len(rics), "webhook_configurations", len(applied), "refused", len(refused))
	for _, r := range refused {
		l.log.Error("customization refused; its rules do not run in this member", "version", l.version, "reason", r)
	}
	return refused, nil
}

// loadWebhook applies h to the target, or, when the policy refuses it,
// gives it to the target as refused: its rules then fail with the reason
// instead of falling through to another step, and it is never called. It
// reports whether h is in the target, and why it was refused.
func (l *Loader) loadWebhook(h webhook.Configuration) (bool, error) {
	if why := l.policy.Check(h); why != nil {
		if err := l.target.RefuseWebhookConfiguration(h, why); err != nil {
			return false, err
		}
		return true, why
	}
	if err := l.target.ApplyWebhookConfiguration(h); err != nil {
		return false, err
	}
	return true, nil
}

// checkSize refuses a nil set or one over MaxSetBytes.
func checkSize(set *agentv1.Customizations) error {
	if set == nil {
		return errors.New("customizations: no set")
	}
	size := 0
	for _, b := range set.GetResourceInterpreterCustomizations() {
		size += len(b)
	}
	for _, b := range set.GetWebhookConfigurations() {
		size += len(b)
	}
	if size > MaxSetBytes {
		return fmt.Errorf("customizations: set %s is %d bytes, over the agent's %d", set.GetVersion(), size, MaxSetBytes)
	}
	return nil
}

// decodeCustomizations decodes and validates each customization; those
// that fail are refused, as are second ones of a name.
func (l *Loader) decodeCustomizations(ctx context.Context, raws [][]byte) ([]configv1alpha1.ResourceInterpreterCustomization, []string) {
	var out []configv1alpha1.ResourceInterpreterCustomization
	var refused []string
	seen := map[string]bool{}
	for i, raw := range raws {
		cs, err := interpreter.DecodeCustomizations(raw)
		if err == nil && len(cs) != 1 {
			err = fmt.Errorf("%d objects; want one", len(cs))
		}
		if err != nil {
			refused = append(refused, fmt.Sprintf("customization #%d: %v", i, err))
			continue
		}
		c := cs[0]
		if seen[c.Name] {
			refused = append(refused, fmt.Sprintf("customization %s: a second one of that name", c.Name))
			continue
		}
		if err := interpreter.ValidateCustomization(ctx, l.target.VM(), &c, nil); err != nil {
			refused = append(refused, err.Error())
			continue
		}
		seen[c.Name] = true
		out = append(out, c)
	}
	return out, refused
}

// decodeWebhooks decodes each webhook configuration; those that do not
// decode are refused, as are second ones of a name.
func decodeWebhooks(raws [][]byte) ([]webhook.Configuration, []string) {
	var out []webhook.Configuration
	var refused []string
	seen := map[string]bool{}
	for i, raw := range raws {
		cfg, err := webhook.DecodeConfiguration(raw)
		switch {
		case err != nil:
			refused = append(refused, fmt.Sprintf("webhook configuration #%d: %v", i, err))
		case seen[cfg.Name]:
			refused = append(refused, fmt.Sprintf("webhook configuration %s: a second one of that name", cfg.Name))
		default:
			seen[cfg.Name] = true
			out = append(out, cfg)
		}
	}
	return out, refused
}
