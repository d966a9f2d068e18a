package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxReasonBytes bounds the text a webhook controls (its status message, a
// mismatched uid) quoted in an error, in bytes.
const maxReasonBytes = 256

// call sends req to h, through h's breaker, and returns the verified
// response; a refused hook (Refuse) fails at once and sends nothing. Its errors never quote the response body: a failed call says
// its HTTP status or which part of the response was wrong.
//
// The call that finds the breaker half-open is sent in the background as
// the probe and fails at once with ErrBreakerOpen: no caller waits on a
// webhook that was failing, so a dead one costs the controllers
// BreakerFailures timeouts once, not one timeout per cool-down.
func (w *Interpreter) call(ctx context.Context, h *hook, req *Request) (*Response, error) {
	if h.refused != nil {
		return nil, fmt.Errorf("webhook %s: %w", h.uid, h.refused)
	}
	probe, err := h.breaker.allow(h.uid, w.now())
	if err != nil {
		return nil, err
	}
	if probe {
		return nil, w.startProbe(h, req)
	}
	out, err := w.exchange(ctx, h, req)
	// A call the caller gave up on says nothing about the webhook.
	counted := err == nil || ctx.Err() == nil
	h.breaker.done(w.now(), false, counted, err)
	if err != nil {
		return nil, fmt.Errorf("webhook %s: %w", h.uid, err)
	}
	if err := verify(req, out.Response); err != nil {
		return nil, fmt.Errorf("webhook %s: %w", h.uid, err)
	}
	return out.Response, nil
}

// startProbe sends req to h in the background; its outcome closes or
// reopens h's breaker. It returns the caller's error.
func (w *Interpreter) startProbe(h *hook, req *Request) error {
	w.probeMu.Lock()
	defer w.probeMu.Unlock()
	if w.closed {
		h.breaker.done(w.now(), true, false, nil)
		return fmt.Errorf("webhook %s: %w (half-open; the interpreter is closed)", h.uid, ErrBreakerOpen)
	}
	w.probes.Add(1)
	go func() {
		defer w.probes.Done()
		_, err := w.exchange(w.probeCtx, h, req)
		h.breaker.done(w.now(), true, err == nil || w.probeCtx.Err() == nil, err)
	}()
	return fmt.Errorf("webhook %s: %w (half-open after %s; this call probes the webhook in the background)",
		h.uid, ErrBreakerOpen, BreakerCooldown)
}

// exchange posts req and decodes the answer. Its errors are the webhook's
// failures the breaker counts.
func (w *Interpreter) exchange(ctx context.Context, h *hook, req *Request) (*Context, error) {
	body, err := json.Marshal(Context{TypeMeta: typeMeta(), Request: req})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Accept", "application/json")
	resp, err := h.client.Do(httpReq)
	if err != nil {
		return nil, fmt.Errorf("call: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("response larger than %d bytes", maxResponseBytes)
	}
	var out Context
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, decodeError(err)
	}
	return &out, nil
}

// statusError describes a non-200 answer by its code and Go's text for it,
// never the server's reason phrase or body.
func statusError(code int) error {
	msg := fmt.Sprintf("HTTP status %d %s", code, http.StatusText(code))
	if code >= 300 && code < 400 {
		msg += " (redirects are not followed)"
	}
	return errors.New(msg)
}

// decodeError describes an undecodable response without quoting it.
func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("decode response: invalid JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Errorf("decode response: field %s: wrong JSON type for %s", sanitize(typ.Field), typ.Type)
	default:
		return errors.New("decode response: not a ResourceInterpreterContext")
	}
}

// sanitize bounds s to maxReasonBytes and replaces what is not printable,
// for text a webhook controls that an error quotes.
func sanitize(s string) string {
	cut := len(s) > maxReasonBytes
	if cut {
		s = s[:maxReasonBytes]
		for !utf8.ValidString(s) && s != "" {
			s = s[:len(s)-1]
		}
	}
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
	if cut {
		s += "…"
	}
	return s
}

// BreakerState is the breaker state of the webhook "<config>/<webhook>":
// StateClosed, StateOpen or StateHalfOpen; "" when there is no such
// webhook.
func (w *Interpreter) BreakerState(uid string) string {
	for _, h := range *w.hooks.Load() {
		if h.uid == uid {
			return h.breaker.state(w.now())
		}
	}
	return ""
}
