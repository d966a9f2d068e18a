package client

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// ApplyOptions are Apply's settings.
type ApplyOptions struct {
	// DryRun validates and reports what would happen, storing nothing.
	DryRun bool
	// DefaultNamespace is the namespace of namespaced objects that name
	// none; "default" when empty.
	DefaultNamespace string
}

// Apply creates or updates the objects of manifests (YAML or JSON, one or
// many documents each), in dependency order. When any object is rejected,
// nothing is stored: it returns the response (each result says what would
// have happened) and a *RejectedError naming every rejected object and
// field. When a write fails, the objects written before it stay: it
// returns the response and a *PartialError saying what was written, what
// failed and why, and what was skipped.
func (c *Client) Apply(ctx context.Context, manifests ...[]byte) (*hubv1.ApplyResponse, error) {
	return c.ApplyWith(ctx, ApplyOptions{}, manifests...)
}

// ApplyWith is Apply with options.
func (c *Client) ApplyWith(ctx context.Context, opts ApplyOptions, manifests ...[]byte) (*hubv1.ApplyResponse, error) {
	resp, err := c.Objects.Apply(ctx, &hubv1.ApplyRequest{Manifests: joinDocuments(manifests),
		DryRun: opts.DryRun, DefaultNamespace: opts.DefaultNamespace})
	if err != nil {
		return nil, c.Explain(err)
	}
	if rej := rejected(resp.GetResults()); rej != nil {
		return resp, rej
	}
	if resp.GetPartial() {
		return resp, &PartialError{Results: resp.GetResults()}
	}
	return resp, nil
}

// joinDocuments makes one multi-document YAML of several manifests; one is
// sent as it is (it may be a JSON array or a List).
func joinDocuments(manifests [][]byte) []byte {
	if len(manifests) == 1 {
		return manifests[0]
	}
	return bytes.Join(manifests, []byte("\n---\n"))
}

// RejectedError is the error of an Apply or Simulate whose input held
// invalid objects; nothing was stored.
type RejectedError struct {
	// Results are the rejected objects' results, with their field errors.
	Results []*hubv1.ApplyResult
}

func (e *RejectedError) Error() string {
	parts := make([]string, 0, len(e.Results))
	for _, r := range e.Results {
		parts = append(parts, fmt.Sprintf("%s: %s", RefString(r.GetRef()), rejection(r)))
	}
	return "rejected, nothing stored (fix the named fields and apply again): " + strings.Join(parts, "; ")
}

// rejection is one rejected object's message and field errors.
func rejection(r *hubv1.ApplyResult) string {
	msg := r.GetMessage()
	for _, fe := range r.GetFieldErrors() {
		msg += fmt.Sprintf(" [%s: %s]", fe.GetField(), fe.GetDetail())
	}
	return msg
}

// rejected returns the error naming the rejected results, nil when none is.
func rejected(results []*hubv1.ApplyResult) *RejectedError {
	var bad []*hubv1.ApplyResult
	for _, r := range results {
		if r.GetOutcome() == hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED {
			bad = append(bad, r)
		}
	}
	if bad == nil {
		return nil
	}
	return &RejectedError{Results: bad}
}

// PartialError is the error of an Apply whose writes stopped at a failed
// one: the objects written before it stay written (outcome CREATED or
// CONFIGURED, with a revision), the failed one says why (FAILED), the
// others were not written (SKIPPED).
type PartialError struct {
	// Results are every object's results, in input order.
	Results []*hubv1.ApplyResult
}

func (e *PartialError) Error() string {
	var written, failed, skipped []string
	for _, r := range e.Results {
		switch r.GetOutcome() {
		case hubv1.ApplyOutcome_APPLY_OUTCOME_FAILED:
			failed = append(failed, r.GetMessage())
		case hubv1.ApplyOutcome_APPLY_OUTCOME_SKIPPED:
			skipped = append(skipped, RefString(r.GetRef()))
		case hubv1.ApplyOutcome_APPLY_OUTCOME_CREATED, hubv1.ApplyOutcome_APPLY_OUTCOME_CONFIGURED:
			written = append(written, RefString(r.GetRef()))
		}
	}
	return fmt.Sprintf("partly stored: failed: %s; skipped: %s; written and kept: %s",
		strings.Join(failed, "; "), strings.Join(skipped, ", "), strings.Join(written, ", "))
}

// RefString names an object as tetherctl does: Kind namespace/name, or Kind
// name for cluster-scoped ones.
func RefString(r *hubv1.ObjectRef) string {
	if r.GetNamespace() == "" {
		return r.GetKind() + " " + r.GetName()
	}
	return r.GetKind() + " " + r.GetNamespace() + "/" + r.GetName()
}

// Get returns one object; its error's code is NotFound when it does not
// exist.
func (c *Client) Get(ctx context.Context, ref *hubv1.ObjectRef) (*hubv1.Object, error) {
	resp, err := c.Objects.Get(ctx, &hubv1.GetRequest{Ref: ref})
	if err != nil {
		return nil, c.Explain(err)
	}
	return resp.GetObject(), nil
}

// Selector selects objects for List and Watch.
type Selector struct {
	// APIVersion may be empty when Kind is unambiguous.
	APIVersion string
	// Kind is required by List; empty in Watch for every kind.
	Kind string
	// Namespace is empty for all namespaces.
	Namespace string
	// LabelSelector is a Kubernetes label selector, e.g. "app=web".
	LabelSelector string
}

// List returns every selected object, reading page after page (pageSize
// objects each; 0 for the hub's default of 500), and the revision the
// first page was read at: Watch from it to follow on.
func (c *Client) List(ctx context.Context, sel Selector, pageSize int32) ([]*hubv1.Object, int64, error) {
	var all []*hubv1.Object
	var rev int64
	token := ""
	for {
		page, err := c.ListPage(ctx, sel, pageSize, token)
		if err != nil {
			return nil, 0, err
		}
		if rev == 0 {
			rev = page.Revision // later pages are read at the first's revision
		}
		all = append(all, page.Objects...)
		if token = page.Next; token == "" {
			return all, rev, nil
		}
	}
}

// Page is one page of a List.
type Page struct {
	// Objects are the page's objects.
	Objects []*hubv1.Object
	// Revision is the store revision the page was read at.
	Revision int64
	// Next is the token of the next page, "" after the last one.
	Next string
}

// ListPage reads one page of the selected objects: the first with token
// "", the next with the previous page's Next. List reads them all; a
// caller that needs only some (a shell completion) reads one.
func (c *Client) ListPage(ctx context.Context, sel Selector, pageSize int32, token string) (Page, error) {
	resp, err := c.Objects.List(ctx, &hubv1.ListRequest{ApiVersion: sel.APIVersion, Kind: sel.Kind,
		Namespace: sel.Namespace, LabelSelector: sel.LabelSelector, PageSize: pageSize, PageToken: token})
	if err != nil {
		return Page{}, c.Explain(err)
	}
	return Page{Objects: resp.GetObjects(), Revision: resp.GetRevision(), Next: resp.GetNextPageToken()}, nil
}

// DeleteOptions are Delete's settings.
type DeleteOptions struct {
	// ExpectedRevision deletes only an object still at this revision
	// (FailedPrecondition otherwise); 0 for any.
	ExpectedRevision int64
	// DryRun checks the delete and stores nothing.
	DryRun bool
}

// Delete deletes one object and returns it as it was; its error's code is
// NotFound when it does not exist.
func (c *Client) Delete(ctx context.Context, ref *hubv1.ObjectRef, opts DeleteOptions) (*hubv1.Object, error) {
	resp, err := c.Objects.Delete(ctx, &hubv1.DeleteRequest{Ref: ref, ExpectedRevision: opts.ExpectedRevision, DryRun: opts.DryRun})
	if err != nil {
		return nil, c.Explain(err)
	}
	return resp.GetObject(), nil
}
