package main

import (
	"os"

	_ "time/tzdata" // CronJob time zones (kube-apiserver, kube-controller-manager)

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // the JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go's metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // the version metric
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

// The Kubernetes components' mains, as in k8s.io/kubernetes/cmd/NAME.

func apiServerMain() { os.Exit(cli.Run(apiserver.NewAPIServerCommand())) }

func controllerManagerMain() { os.Exit(cli.Run(controllermanager.NewControllerManagerCommand())) }

func schedulerMain() { os.Exit(cli.Run(scheduler.NewSchedulerCommand())) }
