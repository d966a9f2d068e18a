package v1alpha1

import (
	"fmt"
	"net/url"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// knownOperations are the operations a webhook rule may name.
var knownOperations = []InterpreterOperation{
	InterpreterOperationAll, InterpreterOperationInterpretReplica, InterpreterOperationInterpretComponent,
	InterpreterOperationReviseReplica, InterpreterOperationInterpretStatus, InterpreterOperationPrune,
	InterpreterOperationRetain, InterpreterOperationAggregateStatus, InterpreterOperationInterpretHealth,
	InterpreterOperationInterpretDependency,
}

// Validate checks a ResourceInterpreterWebhookConfiguration as Karmada's
// admission does: metadata, and for each webhook a unique fully qualified
// name, exactly one of url and service, rules with known operations and
// non-empty groups, versions and kinds, a timeout of 1 to 30 seconds and
// the interpreter context version v1alpha1.
func (c *ResourceInterpreterWebhookConfiguration) Validate() field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSSubdomain,
		field.NewPath("metadata"))
	path := field.NewPath("webhooks")
	names := make(map[string]bool, len(c.Webhooks))
	for i := range c.Webhooks {
		hook, p := &c.Webhooks[i], path.Index(i)
		if names[hook.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), hook.Name))
		}
		names[hook.Name] = true
		errs = append(errs, validateWebhook(hook, p)...)
	}
	return errs
}

func validateWebhook(hook *ResourceInterpreterWebhook, path *field.Path) field.ErrorList {
	errs := validation.IsFullyQualifiedName(path.Child("name"), hook.Name)
	for i := range hook.Rules {
		errs = append(errs, validateRuleWithOperations(&hook.Rules[i], path.Child("rules").Index(i))...)
	}
	if ts := hook.TimeoutSeconds; ts != nil && (*ts < MinWebhookTimeoutSeconds || *ts > MaxWebhookTimeoutSeconds) {
		errs = append(errs, field.Invalid(path.Child("timeoutSeconds"), *ts,
			"the timeout value must be between 1 and 30 seconds"))
	}
	errs = append(errs, validateClientConfig(&hook.ClientConfig, path.Child("clientConfig"))...)
	return append(errs, validateContextVersions(hook.InterpreterContextVersions,
		path.Child("interpreterContextVersions"))...)
}

func validateRuleWithOperations(r *RuleWithOperations, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	opath := path.Child("operations")
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(opath, ""))
	}
	for i, op := range r.Operations {
		if !isKnownOperation(op) {
			errs = append(errs, field.NotSupported(opath.Index(i), op, knownOperations))
		}
		if op == InterpreterOperationAll && len(r.Operations) > 1 {
			errs = append(errs, field.Invalid(opath, r.Operations, "if '*' is present, must not specify other operations"))
		}
	}
	errs = append(errs, validateRuleList(r.APIGroups, false, path.Child("apiGroups"))...)
	errs = append(errs, validateRuleList(r.APIVersions, true, path.Child("apiVersions"))...)
	return append(errs, validateRuleList(r.Kinds, true, path.Child("kinds"))...)
}

func isKnownOperation(op InterpreterOperation) bool {
	for _, k := range knownOperations {
		if op == k {
			return true
		}
	}
	return false
}

// validateRuleList checks one list of a rule: required, "*" alone, and, when
// nonEmpty, no empty item (apiGroups may hold "", the core group).
func validateRuleList(items []string, nonEmpty bool, path *field.Path) field.ErrorList {
	if len(items) == 0 {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for i, item := range items {
		if item == "*" && len(items) > 1 {
			errs = append(errs, field.Invalid(path, items, "if '*' is present, must not specify other values"))
		}
		if nonEmpty && item == "" {
			errs = append(errs, field.Required(path.Index(i), ""))
		}
	}
	return errs
}

func validateClientConfig(cc *admissionregistrationv1.WebhookClientConfig, path *field.Path) field.ErrorList {
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		return field.ErrorList{field.Required(path, "exactly one of url or service is required")}
	case cc.URL != nil:
		return validateWebhookURL(*cc.URL, path.Child("url"))
	default:
		return validateWebhookService(cc.Service, path.Child("service"))
	}
}

// validateWebhookURL requires an absolute https URL without user info,
// query or fragment.
func validateWebhookURL(raw string, path *field.Path) field.ErrorList {
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Invalid(path, raw, fmt.Sprintf("must be a valid URL: %v", err))}
	}
	var msgs []string
	if u.Scheme != "https" {
		msgs = append(msgs, fmt.Sprintf("'https' is the only allowed URL scheme, got %q", u.Scheme))
	}
	if u.Host == "" {
		msgs = append(msgs, "host must be specified")
	}
	if u.User != nil {
		msgs = append(msgs, "user information is not permitted in the URL")
	}
	if u.Fragment != "" || u.RawQuery != "" {
		msgs = append(msgs, "query parameters and fragments are not permitted in the URL")
	}
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, raw, msg))
	}
	return errs
}

func validateWebhookService(svc *admissionregistrationv1.ServiceReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if svc.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "service name is required"))
	}
	if svc.Namespace == "" {
		errs = append(errs, field.Required(path.Child("namespace"), "service namespace is required"))
	}
	if svc.Path != nil && !strings.HasPrefix(*svc.Path, "/") {
		errs = append(errs, field.Invalid(path.Child("path"), *svc.Path, "must start with a '/'"))
	}
	if svc.Port != nil {
		for _, msg := range validation.IsValidPortNum(int(*svc.Port)) {
			errs = append(errs, field.Invalid(path.Child("port"), *svc.Port, msg))
		}
	}
	return errs
}

func validateContextVersions(versions []string, path *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(path, fmt.Sprintf("must specify one of %q", InterpreterContextVersion))}
	}
	var errs field.ErrorList
	known := false
	seen := make(map[string]bool, len(versions))
	for i, v := range versions {
		for _, msg := range validation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(path.Index(i), v, msg))
		}
		if seen[v] {
			errs = append(errs, field.Duplicate(path.Index(i), v))
		}
		seen[v] = true
		known = known || v == InterpreterContextVersion
	}
	if !known {
		errs = append(errs, field.Invalid(path, versions, fmt.Sprintf("must include at least one of %q", InterpreterContextVersion)))
	}
	return errs
}
