package clientapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/pipeline/rollout"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/hub/store"
)

// maxRolloutTries bounds the read-modify-write of a rollout record that
// the leader's rollout loop writes at the same time.
const maxRolloutTries = 8

// rolloutService implements RolloutService over the rollout records
// (/tether/rollouts/<work key>) that hub/rollout writes.
type rolloutService struct {
	hubv1.UnimplementedRolloutServiceServer
	b *backend
}

// templated is every RolloutService request: it names the template.
type templated interface{ GetTemplate() *hubv1.ObjectRef }

// GetRollout returns the template's rollout.
func (s rolloutService) GetRollout(ctx context.Context, req *hubv1.GetRolloutRequest) (*hubv1.GetRolloutResponse, error) {
	key, err := s.b.rolloutKey(ctx, req, roles.Read)
	if err != nil {
		return nil, grpcStatus(err)
	}
	rec, _, err := s.b.readRollout(ctx, key)
	if err != nil {
		return nil, grpcStatus(err)
	}
	return &hubv1.GetRolloutResponse{Status: rolloutStatus(rec)}, nil
}

// PauseRollout holds the rollout.
func (s rolloutService) PauseRollout(ctx context.Context, req *hubv1.PauseRolloutRequest) (*hubv1.PauseRolloutResponse, error) {
	st, err := s.change(ctx, req, func(r *rollout.Record) { r.State.Pause() })
	if err != nil {
		return nil, err
	}
	return &hubv1.PauseRolloutResponse{Status: st}, nil
}

// ResumeRollout lifts a pause and tolerates the failures so far.
func (s rolloutService) ResumeRollout(ctx context.Context, req *hubv1.ResumeRolloutRequest) (*hubv1.ResumeRolloutResponse, error) {
	st, err := s.change(ctx, req, func(r *rollout.Record) { r.State.Resume() })
	if err != nil {
		return nil, err
	}
	return &hubv1.ResumeRolloutResponse{Status: st}, nil
}

// UndoRollout applies the template's content at its previous revision, through
// Apply's path (validation, authorization), as its caller.
func (s rolloutService) UndoRollout(ctx context.Context, req *hubv1.UndoRolloutRequest) (*hubv1.UndoRolloutResponse, error) {
	key, err := s.b.rolloutKey(ctx, req, roles.Write)
	if err != nil {
		return nil, grpcStatus(err)
	}
	rec, _, err := s.b.readRollout(ctx, key)
	if err != nil {
		return nil, grpcStatus(err)
	}
	prev, ok := rec.Previous()
	if !ok {
		return nil, grpcStatus(fmt.Errorf("%w: the rollout of %s keeps no previous revision", ErrPrecondition, key))
	}
	c, err := s.b.authorize(ctx)
	if err != nil {
		return nil, grpcStatus(err)
	}
	resp, err := s.b.apply(ctx, &hubv1.ApplyRequest{Manifests: prev.Template}, c)
	if err != nil {
		return nil, grpcStatus(err)
	}
	if !resp.GetCommitted() {
		return nil, grpcStatus(fmt.Errorf("%w: revision %s of %s not applied: %v", ErrPrecondition, prev.Revision, key, resp.GetResults()))
	}
	return &hubv1.UndoRolloutResponse{Status: rolloutStatus(rec)}, nil
}

// change applies edit to the stored record, conditional on the revision
// read, again when the rollout loop wrote meanwhile.
func (s rolloutService) change(ctx context.Context, req templated, edit func(*rollout.Record)) (*hubv1.RolloutStatus, error) {
	key, err := s.b.rolloutKey(ctx, req, roles.Write)
	if err != nil {
		return nil, grpcStatus(err)
	}
	for range maxRolloutTries {
		rec, rev, err := s.b.readRollout(ctx, key)
		if err != nil {
			return nil, grpcStatus(err)
		}
		edit(rec)
		data, err := json.Marshal(rec)
		if err != nil {
			return nil, grpcStatus(err)
		}
		_, err = s.b.st.Update(ctx, store.RolloutKey(key), data, rev)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, grpcStatus(err)
		}
		return rolloutStatus(rec), nil
	}
	return nil, grpcStatus(fmt.Errorf("%w: the rollout of %s kept changing", ErrConcurrent, key))
}

// rolloutKey authorizes verb on the template req names and returns its
// work key.
func (b *backend) rolloutKey(ctx context.Context, req templated, verb roles.Verb) (string, error) {
	c, err := b.authorize(ctx)
	if err != nil {
		return "", err
	}
	ref, err := templateKey(req.GetTemplate())
	if err != nil {
		return "", err
	}
	if err := c.may(verb, ref.Kind, ref.Namespace); err != nil {
		return "", err
	}
	return work.KeyOfRef(ref), nil
}

// readRollout reads the record of work key and its revision.
func (b *backend) readRollout(ctx context.Context, key string) (*rollout.Record, int64, error) {
	kv, err := b.st.Get(ctx, store.RolloutKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, fmt.Errorf("%w: no rollout of %s (no RolloutPolicy selects it, or it has not started)", ErrNotFound, key)
	}
	if err != nil {
		return nil, 0, err
	}
	rec, err := rollout.DecodeRecord(kv.Value)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: the rollout of %s does not decode: %v", ErrPrecondition, key, err)
	}
	return rec, kv.Revision, nil
}

// rolloutStatus is the API's view of a record.
func rolloutStatus(r *rollout.Record) *hubv1.RolloutStatus {
	st := &hubv1.RolloutStatus{Policy: r.Policy, Revision: r.State.Revision, Stable: r.State.Stable,
		Phase: string(r.State.Phase), Message: r.State.Message, Held: r.State.Held}
	for name, c := range r.State.Clusters {
		rc := &hubv1.RolloutCluster{Cluster: name, Phase: string(c.Phase), Revision: c.Revision, Late: c.Late, Message: c.Message}
		if !c.Since.IsZero() {
			rc.Since = timestamppb.New(c.Since)
		}
		st.Clusters = append(st.Clusters, rc)
	}
	sort.Slice(st.Clusters, func(i, j int) bool { return st.Clusters[i].Cluster < st.Clusters[j].Cluster })
	for _, e := range r.History {
		st.History = append(st.History, e.Revision)
	}
	return st
}
