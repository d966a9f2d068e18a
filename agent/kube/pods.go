package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// protobufMagic opens every protobuf body of the API server, before its
// runtime.Unknown envelope.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// PodPage lists one page of Pods of all namespaces (opts.Limit and
// opts.Continue page it) and calls fn with each, decoding one pod at a
// time: the page is never held decoded as a whole (a decoded pod is some
// 10 KB; its protobuf some 4 KB). fn must not keep the pod. It returns
// the continue token of the next page, "" after the last.
func (c *Client) PodPage(ctx context.Context, opts metav1.ListOptions, fn func(*corev1.Pod)) (string, error) {
	var contentType string
	res := c.rest.Get().Resource("pods").VersionedParams(&opts, parameterCodec).Do(ctx)
	body, err := res.ContentType(&contentType).Raw()
	if err != nil {
		return "", fmt.Errorf("kube: list pods: %w", err)
	}
	if !strings.HasPrefix(contentType, runtime.ContentTypeProtobuf) {
		var list corev1.PodList // a server that answered JSON
		if err := res.Into(&list); err != nil {
			return "", fmt.Errorf("kube: list pods: %w", err)
		}
		for i := range list.Items {
			fn(&list.Items[i])
		}
		return list.Continue, nil
	}
	next, err := eachPod(body, fn)
	if err != nil {
		return "", fmt.Errorf("kube: list pods: %w", err)
	}
	return next, nil
}

// eachPod walks a protobuf PodList body (magic, runtime.Unknown whose raw
// field holds the list) and calls fn with each item.
func eachPod(body []byte, fn func(*corev1.Pod)) (string, error) {
	if !bytes.HasPrefix(body, protobufMagic) {
		return "", errors.New("protobuf body without its magic prefix")
	}
	raw, err := field(body[len(protobufMagic):], 2) // runtime.Unknown.Raw
	if err != nil {
		return "", fmt.Errorf("envelope: %w", err)
	}
	var next string
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return "", protowire.ParseError(n)
		}
		raw = raw[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, raw); n < 0 {
				return "", protowire.ParseError(n)
			}
			raw = raw[n:]
			continue
		}
		b, n := protowire.ConsumeBytes(raw)
		if n < 0 {
			return "", protowire.ParseError(n)
		}
		raw = raw[n:]
		switch num {
		case 1: // ListMeta
			var meta metav1.ListMeta
			if err := meta.Unmarshal(b); err != nil {
				return "", fmt.Errorf("list metadata: %w", err)
			}
			next = meta.Continue
		case 2: // Items
			var pod corev1.Pod
			if err := pod.Unmarshal(b); err != nil {
				return "", fmt.Errorf("pod: %w", err)
			}
			fn(&pod)
		}
	}
	return next, nil
}

// field returns the last bytes value of field num in the message b.
func field(b []byte, num protowire.Number) ([]byte, error) {
	var out []byte
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return nil, protowire.ParseError(l)
			}
			out, b = v, b[l:]
			continue
		}
		if l = protowire.ConsumeFieldValue(n, typ, b); l < 0 {
			return nil, protowire.ParseError(l)
		}
		b = b[l:]
	}
	return out, nil
}
