package agent

import (
	"context"
	"fmt"
	"net/http"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tetherproj/tether/agent/apply"
	"github.com/tetherproj/tether/agent/capacity"
	"github.com/tetherproj/tether/agent/customizations"
	"github.com/tetherproj/tether/agent/kube"
	"github.com/tetherproj/tether/agent/memberproxy"
	"github.com/tetherproj/tether/agent/state"
	"github.com/tetherproj/tether/agent/state/secret"
	"github.com/tetherproj/tether/agent/status"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeMember builds the member side for the cluster cfg.Kubeconfig (or the
// in-cluster configuration) reaches: apply (with drift repair), status and
// capacity, sharing one interpreter, which the hub's customizations are
// loaded into.
func kubeMember(cfg Config, reg prometheus.Registerer, requests *kube.Requests, logger hclog.Logger) (*Member, error) {
	restCfg, err := restConfig(cfg.Kubeconfig)
	if err != nil {
		return nil, err
	}
	requests.Wrap(restCfg)
	interp, err := interpreter.New(interpreterConfig(cfg, memoryLimit()), logger)
	if err != nil {
		return nil, fmt.Errorf("interpreter: %w", err)
	}
	applier, err := apply.New(apply.Config{RESTConfig: restCfg, Interpreter: interp, Registerer: reg}, logger)
	if err != nil {
		return nil, err
	}
	meter, err := capacity.New(capacity.Config{RESTConfig: restCfg, Topology: cfg.Topology}, logger)
	if err != nil {
		return nil, err
	}
	reporter := status.New(status.Config{Source: applier, Interpreter: interp}, logger)
	ping, err := readyzPing(restCfg)
	if err != nil {
		return nil, err
	}
	proxy, err := proxyHandler(cfg, restCfg, logger)
	if err != nil {
		return nil, err
	}
	return &Member{
		Proxy:          proxy,
		Ping:           ping,
		Applier:        applier,
		Status:         reporter,
		Capacity:       meter,
		Runners:        []Runner{applier, reporter},
		OnSettings:     func(s *Settings) { reporter.SetMinInterval(s.GetStatusMinInterval().AsDuration()) },
		Customizations: refreshing{customizations.New(interp, cfg.Webhooks, logger), reporter},
	}, nil
}

// proxyHandler serves the hub's member proxy requests to the member of
// restCfg, unless --member-proxy is off.
func proxyHandler(cfg Config, restCfg *rest.Config, logger hclog.Logger) (http.Handler, error) {
	mode, err := memberproxy.ParseMode(cfg.MemberProxy)
	if err != nil || mode == memberproxy.Off {
		return nil, err
	}
	return memberproxy.NewHandler(restCfg, mode, 0, logger)
}

// readyzPing asks the API server of restCfg for its /readyz.
func readyzPing(restCfg *rest.Config) (func(context.Context) error, error) {
	kc, err := kube.New(restCfg)
	if err != nil {
		return nil, fmt.Errorf("member client: %w", err)
	}
	return kc.Readyz, nil
}

// refreshing loads customizations, then has the status reporter read
// every work again: health and status rules may have changed. Retain
// needs nothing: it runs with the new rules at the next apply or drift
// repair.
type refreshing struct {
	*customizations.Loader
	status *status.Reporter
}

func (r refreshing) Load(ctx context.Context, set *agentv1.Customizations) ([]string, error) {
	refused, err := r.Loader.Load(ctx, set)
	if err == nil {
		r.status.Refresh()
	}
	return refused, err
}

// secretStore is the state kept in the Secret cfg.StateSecret of the
// cluster cfg.Kubeconfig reaches (also when cfg.Member replaces the rest
// of the member side).
func secretStore(cfg Config, requests *kube.Requests) (*state.Store, error) {
	ns, name, err := splitStateSecret(cfg.StateSecret)
	if err != nil {
		return nil, err
	}
	restCfg, err := restConfig(cfg.Kubeconfig)
	if err != nil {
		return nil, err
	}
	requests.Wrap(restCfg)
	kc, err := kube.New(restCfg)
	if err != nil {
		return nil, fmt.Errorf("--state-secret %s: %w", cfg.StateSecret, err)
	}
	return state.New(secret.New(kc.Secrets(ns), ns, name)), nil
}

// Client-side rate limit of the agent's requests to its member API server
// (requests per second, burst), Karmada's agent defaults for the member
// cluster (--cluster-api-qps 40, --cluster-api-burst 60). client-go's own
// defaults (5/10) throttled the applies: 100 works took some 40 s to reach
// a member. Each client (apply's dynamic client and agent/kube client,
// capacity's) has its own limiter.
const (
	memberQPS   = 40
	memberBurst = 60
)

// restConfig reads kubeconfig, or the in-cluster configuration when it is
// empty, with the agent's rate limits.
func restConfig(kubeconfig string) (*rest.Config, error) {
	var c *rest.Config
	var err error
	if kubeconfig == "" {
		if c, err = rest.InClusterConfig(); err != nil {
			return nil, fmt.Errorf("--kubeconfig: not given and not running in a cluster: %w", err)
		}
	} else if c, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	c.QPS, c.Burst = memberQPS, memberBurst
	return c, nil
}
