package ctl

// get --watch: list, then stream ObjectService.Watch events as table rows
// (or objects), re-listing templates now and then because their
// aggregated status lives on the binding, which the watch does not see.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

// Tuned constants of get --watch.
const (
	// statusPollInterval is how often a watch of templates lists again to
	// see aggregated status changes: status changes write the binding, not
	// the template, so the template watch does not report them.
	statusPollInterval = 2 * time.Second
	// rewatchPause is the pause before a watch the client could not
	// resume (client.Restartable: a compacted revision ...) starts over:
	// get --watch lists again, apply --wait watches from the start.
	rewatchPause = time.Second
	// minColumnWidth is the narrowest column of a streamed table, so that
	// rows printed before a wider cell arrives still mostly line up.
	minColumnWidth = 8
)

// Event column values.
const (
	eventAdded    = "ADDED"
	eventModified = "MODIFIED"
	eventDeleted  = "DELETED"
)

func runGetWatch(ctx context.Context, s IO, k kindSpec, names []string, f getFlags) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	v := &watchView{s: s, k: k, f: f, c: c, last: map[string]string{}}
	if len(names) == 1 {
		v.name = names[0]
	}
	if f.output == formatWide && k.template {
		v.places = c
	}
	for {
		objs, rev, err := v.list(ctx)
		if err != nil {
			return quiet(ctx, err)
		}
		v.sync(ctx, objs)
		err = v.follow(ctx, rev)
		if ctx.Err() != nil {
			return nil // interrupted: the normal end of a watch
		}
		if err != nil && !client.Restartable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(rewatchPause):
		}
	}
}

// quiet drops err when ctx ended: an interrupted watch exits 0.
func quiet(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// watchView prints what a watch sees, remembering the last row of each
// object so that polls print only what changed.
type watchView struct {
	s    IO
	k    kindSpec
	f    getFlags
	c    *client.Client
	name string // only this object; "" for all
	// places is c when rows show where templates run (CLUSTERS), else nil.
	places *client.Client
	table  *streamTable // created with the first row
	// last maps an object's key to what was printed for it last (its row
	// without AGE, or its JSON), so a poll prints only changes.
	last map[string]string
}

// list reads the selection and the revision to watch from.
func (v *watchView) list(ctx context.Context) ([]*hubv1.Object, int64, error) {
	objs, rev, err := v.c.List(ctx, v.f.selection(v.k), 0)
	if err != nil {
		return nil, 0, err
	}
	out := objs[:0]
	for _, o := range objs {
		if v.selected(o) {
			out = append(out, o)
		}
	}
	return out, rev, nil
}

func (v *watchView) selected(o *hubv1.Object) bool {
	return v.name == "" || o.GetRef().GetName() == v.name
}

// follow streams changes after rev until the watch ends (its error: the
// client resumes a broken one itself) or ctx does; for templates it lists
// again every statusPollInterval.
func (v *watchView) follow(ctx context.Context, rev int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan *hubv1.WatchResponse)
	done := make(chan error, 1)
	go func() { done <- receive(ctx, v.c.Watch(ctx, v.f.selection(v.k), rev), events) }()
	defer func() { cancel(); <-done }()
	var poll <-chan time.Time
	if v.k.template {
		t := time.NewTicker(statusPollInterval)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case ev := <-events:
			v.event(ctx, ev)
		case <-poll:
			objs, _, err := v.list(ctx)
			if err != nil {
				return err
			}
			v.sync(ctx, objs)
		case err := <-done:
			done <- err // for the deferred wait
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// receive forwards the watch's events until it ends with its error.
func receive(ctx context.Context, watch iter.Seq2[*hubv1.WatchResponse, error], events chan<- *hubv1.WatchResponse) error {
	for ev, err := range watch {
		if err != nil {
			return err
		}
		select {
		case events <- ev:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return ctx.Err()
}

// event prints one watch event. A template is read again so that its row
// carries the aggregated status, as get shows it.
func (v *watchView) event(ctx context.Context, ev *hubv1.WatchResponse) {
	o := ev.GetObject()
	if !v.selected(o) {
		return
	}
	kind := eventModified
	switch ev.GetType() {
	case hubv1.EventType_EVENT_TYPE_ADDED:
		kind = eventAdded
	case hubv1.EventType_EVENT_TYPE_DELETED:
		kind = eventDeleted
	}
	if v.k.template && kind != eventDeleted {
		if got, err := v.c.Get(ctx, o.GetRef()); err == nil {
			o = got
		} // else deleted meanwhile (its event follows) or unreadable: show it as stored
	}
	v.show(ctx, kind, o)
}

// sync prints what changed since the last print: new objects as ADDED,
// changed rows as MODIFIED, vanished objects as DELETED.
func (v *watchView) sync(ctx context.Context, objs []*hubv1.Object) {
	seen := map[string]bool{}
	for _, o := range objs {
		key := objectKey(o.GetRef())
		seen[key] = true
		prev, ok := v.last[key]
		switch {
		case !ok:
			v.show(ctx, eventAdded, o)
		case prev != v.fingerprint(ctx, o):
			v.show(ctx, eventModified, o)
		}
	}
	for key := range v.last {
		if !seen[key] {
			delete(v.last, key)
			ns, name, _ := strings.Cut(key, "/")
			v.show(ctx, eventDeleted, &hubv1.Object{Ref: &hubv1.ObjectRef{Namespace: ns, Name: name},
				ObjectJson: fmt.Appendf(nil, `{"metadata":{"namespace":%q,"name":%q}}`, ns, name)})
		}
	}
}

// show prints o with its event and remembers it.
func (v *watchView) show(ctx context.Context, event string, o *hubv1.Object) {
	key := objectKey(o.GetRef())
	if event == eventDeleted {
		delete(v.last, key)
	} else {
		v.last[key] = v.fingerprint(ctx, o)
	}
	switch v.f.output {
	case formatJSON, formatYAML:
		writeWatched(v.s.Out, v.f.output, o.GetObjectJson())
		return
	}
	if v.table == nil {
		v.table = newStreamTable(v.s.Out, append([]string{"EVENT"}, tableHeader(v.k, v.f, v.places != nil)...))
	}
	v.table.row(append([]string{event}, tableRow(ctx, v.k, o, v.f, v.places, time.Now())...))
}

// fingerprint is what a poll compares: the row without AGE, or the JSON.
func (v *watchView) fingerprint(ctx context.Context, o *hubv1.Object) string {
	if v.f.output == formatJSON || v.f.output == formatYAML {
		return string(o.GetObjectJson())
	}
	row := tableRow(ctx, v.k, o, v.f, v.places, time.Time{})
	return strings.Join(row, "\t") // AGE is constant ("<unknown>" or a fixed offset) at the zero time
}

// objectKey identifies an object within one kind.
func objectKey(ref *hubv1.ObjectRef) string { return ref.GetNamespace() + "/" + ref.GetName() }

// writeWatched writes one watched object: indented JSON, or a YAML
// document after "---".
func writeWatched(w io.Writer, format string, obj []byte) {
	if format == formatJSON {
		_ = writeValue(w, formatJSON, json.RawMessage(obj))
		return
	}
	y, err := yaml.JSONToYAML(obj)
	if err != nil {
		return
	}
	fmt.Fprintf(w, "---\n%s", y)
}

// streamTable writes rows as they come, aligned like table: each column is
// as wide as the widest cell printed so far (rows printed earlier are not
// realigned).
type streamTable struct {
	w      io.Writer
	widths []int
}

func newStreamTable(w io.Writer, header []string) *streamTable {
	t := &streamTable{w: w}
	t.row(header)
	return t
}

func (t *streamTable) row(cells []string) {
	var b strings.Builder
	for i, c := range cells {
		if i >= len(t.widths) {
			t.widths = append(t.widths, 0)
		}
		t.widths[i] = max(t.widths[i], len(c), minColumnWidth)
		b.WriteString(c)
		if i < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", t.widths[i]-len(c)+3))
		}
	}
	fmt.Fprintln(t.w, b.String())
}
