package customizations

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// ErrWebhookRefused marks an interpreter error that is a webhook this
// member's owner refused (WebhookPolicy): the agent never calls it.
var ErrWebhookRefused = errors.New("the interpreter webhook is refused by this member cluster's agent: it is never called from here and its rule does not run")

// WebhookPolicy is what a member cluster's owner lets the hub's
// interpreter webhooks do from the agent (tether-agent
// --refuse-interpreter-webhooks, --interpreter-webhook-hosts). The zero
// policy calls every webhook.
type WebhookPolicy struct {
	// Refuse refuses every webhook configuration.
	Refuse bool
	// Hosts, when not empty, are the only hosts webhooks may be called at:
	// a name or address exactly (a service is <name>.<namespace>.svc), or
	// "*.suffix" for every name under suffix. A configuration with one
	// webhook elsewhere is refused whole.
	Hosts []string
}

// Validate checks the hosts' form and names the flag.
func (p WebhookPolicy) Validate() error {
	for _, h := range p.Hosts {
		name := strings.TrimPrefix(h, "*.")
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 && validation.IsValidIP(nil, name) != nil {
			return fmt.Errorf("--interpreter-webhook-hosts: %q: want a host name, an IP address or *.suffix: %s", h, strings.Join(errs, "; "))
		}
	}
	return nil
}

// Check returns nil when every webhook of cfg may be called, else an
// error wrapping ErrWebhookRefused that says which flag refuses it.
func (p WebhookPolicy) Check(cfg webhook.Configuration) error {
	if p.Refuse {
		return fmt.Errorf("%w (--refuse-interpreter-webhooks)", ErrWebhookRefused)
	}
	if len(p.Hosts) == 0 {
		return nil
	}
	for _, h := range cfg.Webhooks {
		host := webhookHost(h)
		if !p.allows(host) {
			return fmt.Errorf("%w (webhook %s is at host %q, not in --interpreter-webhook-hosts %s)",
				ErrWebhookRefused, h.Name, host, strings.Join(p.Hosts, ","))
		}
	}
	return nil
}

// allows reports whether host is in p.Hosts, exactly or under a "*."
// suffix; names compare without case.
func (p WebhookPolicy) allows(host string) bool {
	host = strings.ToLower(host)
	return host != "" && slices.ContainsFunc(p.Hosts, func(h string) bool {
		h = strings.ToLower(h)
		if suffix, ok := strings.CutPrefix(h, "*."); ok {
			return strings.HasSuffix(host, "."+suffix)
		}
		return host == h
	})
}

// webhookHost is the host a webhook is called at, as the interpreter's
// client dials it: the service's <name>.<namespace>.svc (a service wins
// over url), else the url's host; empty when there is none to parse.
func webhookHost(h configv1alpha1.ResourceInterpreterWebhook) string {
	cc := h.ClientConfig
	if s := cc.Service; s != nil {
		return s.Name + "." + s.Namespace + ".svc"
	}
	if cc.URL == nil {
		return ""
	}
	u, err := url.Parse(*cc.URL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
