package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

func baseWebhookConfig() *ResourceInterpreterWebhookConfiguration {
	return &ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "examples"},
		Webhooks: []ResourceInterpreterWebhook{{
			Name: "workloads.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL: ptr("https://karmada-interpreter-webhook-example.karmada-system.svc:443/interpreter-workload"),
			},
			Rules: []RuleWithOperations{{
				Operations: []InterpreterOperation{InterpreterOperationInterpretReplica, InterpreterOperationRetain},
				Rule:       Rule{APIGroups: []string{"workload.example.io"}, APIVersions: []string{"v1alpha1"}, Kinds: []string{"Workload"}},
			}},
			InterpreterContextVersions: []string{"v1alpha1"},
		}},
	}
}

func hook(c *ResourceInterpreterWebhookConfiguration) *ResourceInterpreterWebhook {
	return &c.Webhooks[0]
}

func TestValidateWebhookConfiguration(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*ResourceInterpreterWebhookConfiguration)
		want   []string
		detail string
	}{
		{"valid", func(*ResourceInterpreterWebhookConfiguration) {}, nil, ""},
		{"valid service and wildcards", func(c *ResourceInterpreterWebhookConfiguration) {
			hook(c).ClientConfig = admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "karmada-system", Name: "hook", Path: ptr("/interpret"), Port: ptr[int32](8443)}}
			hook(c).Rules[0] = RuleWithOperations{Operations: []InterpreterOperation{InterpreterOperationAll},
				Rule: Rule{APIGroups: []string{""}, APIVersions: []string{"*"}, Kinds: []string{"*"}}}
			hook(c).TimeoutSeconds = ptr[int32](30)
		}, nil, ""},
		{"duplicate names", func(c *ResourceInterpreterWebhookConfiguration) { c.Webhooks = append(c.Webhooks, c.Webhooks[0]) },
			[]string{"webhooks[1].name"}, "Duplicate value"},
		{"name not fully qualified", func(c *ResourceInterpreterWebhookConfiguration) { hook(c).Name = "workloads" },
			[]string{"webhooks[0].name"}, "at least three segments"},
		{"url and service", func(c *ResourceInterpreterWebhookConfiguration) {
			hook(c).ClientConfig.Service = &admissionregistrationv1.ServiceReference{Namespace: "a", Name: "b"}
		}, []string{"webhooks[0].clientConfig"}, "exactly one of url or service is required"},
		{"neither url nor service", func(c *ResourceInterpreterWebhookConfiguration) { hook(c).ClientConfig.URL = nil },
			[]string{"webhooks[0].clientConfig"}, ""},
		{"plain http", func(c *ResourceInterpreterWebhookConfiguration) {
			hook(c).ClientConfig.URL = ptr("http://hook.example.com/x")
		},
			[]string{"webhooks[0].clientConfig.url"}, "'https' is the only allowed URL scheme"},
		{"query in url", func(c *ResourceInterpreterWebhookConfiguration) {
			hook(c).ClientConfig.URL = ptr("https://hook.example.com/x?a=b")
		},
			[]string{"webhooks[0].clientConfig.url"}, "query parameters"},
		{"service without name", func(c *ResourceInterpreterWebhookConfiguration) {
			hook(c).ClientConfig = admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "a", Path: ptr("x"), Port: ptr[int32](70000)}}
		}, []string{"webhooks[0].clientConfig.service.name", "webhooks[0].clientConfig.service.path", "webhooks[0].clientConfig.service.port"}, "Required"},
		{"timeout", func(c *ResourceInterpreterWebhookConfiguration) { hook(c).TimeoutSeconds = ptr[int32](31) },
			[]string{"webhooks[0].timeoutSeconds"}, "between 1 and 30 seconds"},
		{"unknown operation", func(c *ResourceInterpreterWebhookConfiguration) { hook(c).Rules[0].Operations[1] = "Explode" },
			[]string{"webhooks[0].rules[0].operations[1]"}, "Unsupported value"},
		{"wildcard with other operations", func(c *ResourceInterpreterWebhookConfiguration) { hook(c).Rules[0].Operations[1] = "*" },
			[]string{"webhooks[0].rules[0].operations"}, "if '*' is present"},
		{"no operations", func(c *ResourceInterpreterWebhookConfiguration) { hook(c).Rules[0].Operations = nil },
			[]string{"webhooks[0].rules[0].operations"}, "Required"},
		{"no kinds", func(c *ResourceInterpreterWebhookConfiguration) { hook(c).Rules[0].Kinds = nil },
			[]string{"webhooks[0].rules[0].kinds"}, "Required"},
		{"empty version", func(c *ResourceInterpreterWebhookConfiguration) { hook(c).Rules[0].APIVersions = []string{""} },
			[]string{"webhooks[0].rules[0].apiVersions[0]"}, "Required"},
		{"wildcard group with others", func(c *ResourceInterpreterWebhookConfiguration) { hook(c).Rules[0].APIGroups = []string{"*", "apps"} },
			[]string{"webhooks[0].rules[0].apiGroups"}, "if '*' is present"},
		{"no context versions", func(c *ResourceInterpreterWebhookConfiguration) { hook(c).InterpreterContextVersions = nil },
			[]string{"webhooks[0].interpreterContextVersions"}, "must specify one of"},
		{"unknown context version only", func(c *ResourceInterpreterWebhookConfiguration) {
			hook(c).InterpreterContextVersions = []string{"v2"}
		}, []string{"webhooks[0].interpreterContextVersions"}, `must include at least one of "v1alpha1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseWebhookConfig()
			tt.mutate(c)
			assertErrors(t, tt.name, c.Validate(), tt.want, tt.detail)
		})
	}
}

func TestWebhookConfigurationSetDefaults(t *testing.T) {
	c := baseWebhookConfig()
	c.Webhooks = append(c.Webhooks, c.Webhooks[0])
	c.Webhooks[1].Name = "other.example.com"
	c.Webhooks[1].TimeoutSeconds = ptr[int32](3)
	c.Webhooks[1].ClientConfig = admissionregistrationv1.WebhookClientConfig{
		Service: &admissionregistrationv1.ServiceReference{Namespace: "a", Name: "b"}}
	c.SetDefaults()
	got := []any{*c.Webhooks[0].TimeoutSeconds, *c.Webhooks[1].TimeoutSeconds, *c.Webhooks[1].ClientConfig.Service.Port}
	if diff := cmp.Diff([]any{int32(10), int32(3), int32(443)}, got); diff != "" {
		t.Errorf("SetDefaults(webhooks) timeouts and port differ (-want +got):\n%s", diff)
	}
}
