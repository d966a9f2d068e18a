// Package customizations holds the user's interpreter customizations in
// the agent (DESIGN §6): the ResourceInterpreterCustomizations (Lua) and
// ResourceInterpreterWebhookConfigurations the hub sends as one versioned
// set (agentv1.Customizations), loaded into the agent's interpreter, the
// same internal/interpreter the hub runs, so that Retain, InterpretStatus
// and InterpretHealth follow the hub's precedence: Lua customization,
// webhook, built-in customization, native.
//
//	l := customizations.New(interp, policy, logger) // policy: the owner's WebhookPolicy
//	refused, err := l.Load(ctx, set) // from the stream, or the state at start
//	hello.CustomizationsVersion = l.Version()
//
// # Validation
//
// Load refuses a whole set over MaxSetBytes (the agent keeps the set it
// holds). Within a set, each object is decoded strictly and checked as the
// hub checks it (interpreter.ValidateCustomization without the conflict
// rule, which the hub applied when it accepted it, in the interpreter's
// own VM, so under the agent's Lua limits; webhook configurations
// through the interpreter's own checks); one that fails is left out and
// named in the refusals, which the agent logs and acknowledges to the hub.
// Everything else is loaded: the Lua customizations replace the previous
// ones at once, webhook configurations are applied, then those no longer in
// the set removed. A change takes effect for the next call: no restart.
//
// # Webhooks
//
// The agent calls the webhooks itself, from the member cluster, with the
// hub's configuration (url, or service as <name>.<namespace>.svc in the
// member's DNS). A call that cannot reach its webhook fails the operation
// as on the hub (errors never fall through to the next step): Explain
// rewrites such an error into a sentence saying that the webhook is
// unreachable from this member and that its rule did not run, which
// agent/apply puts in the work's ack (Retain) and agent/status in the
// manifest's status message (InterpretStatus, InterpretHealth, which is
// then Unknown as Karmada reports a failed health rule).
//
// # What the member's owner allows
//
// A WebhookPolicy (tether-agent --refuse-interpreter-webhooks,
// --interpreter-webhook-hosts, the chart's interpreterWebhooks) refuses
// webhook configurations: all, or those with a webhook at a host not
// listed. A refused configuration is named in the refusals with the flag
// that refuses it, and loaded into the interpreter as refused
// (RefuseWebhookConfiguration): the agent never calls it, and each
// operation its rules select fails with ErrWebhookRefused, never falling
// through to a built-in rule, so Retain fails the work's apply with that
// error in its ack and InterpretStatus and InterpretHealth put it in the
// manifest's status message (health Unknown).
//
// It imports internal/interpreter/ (its customization and webhook decoders
// and validation), api/config/v1alpha1 and the generated agent protocol,
// never hub/. (its customization and webhook
// decoders and validation), api/config/v1alpha1 and the generated agent
// protocol, never hub/.
package customizations
