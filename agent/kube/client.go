package kube

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
)

// scheme knows core/v1 (with meta/v1's Status, list options and
// discovery types) and nothing else.
var scheme = runtime.NewScheme()

func init() { utilruntime.Must(corev1.AddToScheme(scheme)) }

var (
	codecs         = serializer.NewCodecFactory(scheme)
	parameterCodec = runtime.NewParameterCodec(scheme)
)

// Client reaches one member API server. It is safe for concurrent use.
type Client struct {
	rest rest.Interface
	// accept is the Accept header of Discover's /api and /apis:
	// acceptDiscovery (tests ask for the legacy lists alone).
	accept string
}

// New returns a client of the API server cfg reaches, with cfg's rate
// limit (its own limiter). It sends nothing yet.
func New(cfg *rest.Config) (*Client, error) {
	c := rest.CopyConfig(cfg)
	c.APIPath = "/api"
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.NegotiatedSerializer = codecs.WithoutConversion()
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("kube: client: %w", err)
	}
	return &Client{rest: rc, accept: acceptDiscovery}, nil
}

// Nodes is the client of Nodes.
func (c *Client) Nodes() Resource[*corev1.Node, *corev1.NodeList] {
	return Resource[*corev1.Node, *corev1.NodeList]{rest: c.rest, resource: "nodes",
		newObj: func() *corev1.Node { return &corev1.Node{} }, newList: func() *corev1.NodeList { return &corev1.NodeList{} }}
}

// Events is the client of the Events of namespace.
func (c *Client) Events(namespace string) Resource[*corev1.Event, *corev1.EventList] {
	return Resource[*corev1.Event, *corev1.EventList]{rest: c.rest, resource: "events", namespace: namespace,
		newObj: func() *corev1.Event { return &corev1.Event{} }, newList: func() *corev1.EventList { return &corev1.EventList{} }}
}

// Secrets is the client of the Secrets of namespace.
func (c *Client) Secrets(namespace string) Resource[*corev1.Secret, *corev1.SecretList] {
	return Resource[*corev1.Secret, *corev1.SecretList]{rest: c.rest, resource: "secrets", namespace: namespace,
		newObj: func() *corev1.Secret { return &corev1.Secret{} }, newList: func() *corev1.SecretList { return &corev1.SecretList{} }}
}

// Readyz asks the API server's /readyz; nil when it answers ready.
func (c *Client) Readyz(ctx context.Context) error {
	if err := c.rest.Get().AbsPath("/readyz").Do(ctx).Error(); err != nil {
		return fmt.Errorf("GET /readyz: %w", err)
	}
	return nil
}

// ReadyzBody is Readyz with the server's answer, which names the failed
// checks when it is not ready.
func (c *Client) ReadyzBody(ctx context.Context) ([]byte, error) {
	return c.rest.Get().AbsPath("/readyz").DoRaw(ctx)
}

// Version is the API server's version (its git version, "v1.34.2").
func (c *Client) Version(ctx context.Context) (string, error) {
	body, err := c.rest.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", fmt.Errorf("GET /version: %w", err)
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return "", fmt.Errorf("GET /version: decode: %w", err)
	}
	return info.GitVersion, nil
}
