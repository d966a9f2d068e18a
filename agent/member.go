package agent

import (
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/tetherproj/tether/agent/apply"
	"github.com/tetherproj/tether/agent/capacity"
	"github.com/tetherproj/tether/agent/status"
	"github.com/tetherproj/tether/internal/interpreter"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeMember builds the member side for the cluster cfg.Kubeconfig (or the
// in-cluster configuration) reaches: apply (with drift repair), status and
// capacity, sharing one interpreter.
func kubeMember(cfg Config, logger hclog.Logger) (*Member, error) {
	restCfg, err := restConfig(cfg.Kubeconfig)
	if err != nil {
		return nil, err
	}
	interp, err := interpreter.New(interpreter.Config{}, logger)
	if err != nil {
		return nil, fmt.Errorf("interpreter: %w", err)
	}
	applier, err := apply.New(apply.Config{RESTConfig: restCfg, Interpreter: interp}, logger)
	if err != nil {
		return nil, err
	}
	meter, err := capacity.New(capacity.Config{RESTConfig: restCfg}, logger)
	if err != nil {
		return nil, err
	}
	reporter := status.New(status.Config{Source: applier, Interpreter: interp}, logger)
	return &Member{
		Applier:    applier,
		Status:     reporter,
		Capacity:   meter,
		Runners:    []Runner{applier, reporter},
		OnSettings: func(s *Settings) { reporter.SetMinInterval(s.GetStatusMinInterval().AsDuration()) },
	}, nil
}

// restConfig reads kubeconfig, or the in-cluster configuration when it is
// empty.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		c, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig: not given and not running in a cluster: %w", err)
		}
		return c, nil
	}
	c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	return c, nil
}
