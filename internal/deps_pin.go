//go:build tools

// This file pins the agreed dependencies while the first packages that use
// them are written; it is removed once they are imported for real.
package internal

import (
	_ "github.com/evanphx/json-patch/v5"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/hashicorp/go-hclog"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/yuin/gopher-lua"
	_ "go.etcd.io/etcd/client/v3"
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "google.golang.org/grpc"
	_ "google.golang.org/grpc/health"
	_ "google.golang.org/grpc/reflection"
	_ "google.golang.org/protobuf/proto"
	_ "k8s.io/api/apps/v1"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	_ "k8s.io/apimachinery/pkg/util/validation/field"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "sigs.k8s.io/json"
	_ "sigs.k8s.io/yaml"
)
