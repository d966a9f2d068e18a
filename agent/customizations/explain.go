package customizations

import (
	"errors"
	"fmt"
	"net/url"
)

// ErrWebhookUnreachable marks an interpreter error that is a webhook the
// member cluster cannot reach (Explain).
var ErrWebhookUnreachable = errors.New("the interpreter webhook is unreachable from this member cluster, so its rule did not run here")

// Explain returns err, or for a webhook call that did not reach its
// webhook (connection refused, no route, DNS, TLS, timeout) an error
// wrapping ErrWebhookUnreachable that says so first, followed by err.
func Explain(err error) error {
	if err == nil || !unreachable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrWebhookUnreachable, err)
}

// unreachable reports whether err is the webhook client's transport error:
// internal/interpreter/webhook wraps what http.Client.Do returns, a
// *url.Error, as "webhook <config>/<name>: call: ..."; nothing else in the
// interpreter makes HTTP requests.
func unreachable(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}
