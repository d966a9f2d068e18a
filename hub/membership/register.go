package membership

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/certs"
)

// Request is one registration.
type Request struct {
	Token   string
	Cluster string
	// CSRPEM is the agent's certificate request; its subject is ignored.
	CSRPEM []byte
	// Topology is what the agent reported (provider, region, zones,
	// labels); it goes into the Cluster record when Register creates it.
	Topology *agentv1.Topology
}

// Result is a successful registration.
type Result struct {
	CertPEM, CAPEM []byte
	// Cert is CertPEM parsed.
	Cert     *x509.Certificate
	NotAfter time.Time
	// KeyFingerprint is the registered key's.
	KeyFingerprint string
}

// Register checks the token, binds the name to the CSR's key (or records
// it as pending and returns ErrPendingApproval), uses the token once, and
// signs the CSR as the cluster's agent. It creates the Cluster record when
// there is none, so that a cluster registered again after Remove is listed
// before its first heartbeat.
func (r *Registry) Register(ctx context.Context, req Request) (Result, error) {
	if err := validName(req.Cluster); err != nil {
		return Result{}, err
	}
	if err := ValidateLabels(req.Topology.GetLabels()); err != nil {
		return Result{}, fmt.Errorf("%w: cluster %q: %v", ErrInvalid, req.Cluster, err)
	}
	csr, err := certs.ParseCSR(req.CSRPEM)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := r.checkToken(ctx, req.Token, req.Cluster); err != nil {
		return Result{}, err
	}
	fp := Fingerprint(csr.RawSubjectPublicKeyInfo)
	rec, rev, err := r.agent(ctx, req.Cluster)
	if err != nil {
		return Result{}, err
	}
	exists, err := r.clusterExists(ctx, req.Cluster)
	if err != nil {
		return Result{}, err
	}
	switch admit(rec, exists, fp) {
	case admitPending:
		return Result{}, r.recordPending(ctx, req.Cluster, rec, rev, fp)
	case admitSame:
	case admitBind:
		r.log.Info("binding cluster name to a new key", "cluster", req.Cluster, "key", fp)
	}
	if err := r.redeem(ctx, req.Token, req.Cluster); err != nil {
		return Result{}, err
	}
	issued, err := r.ca.SignCSR(req.CSRPEM, pki.Identity{Name: req.Cluster, Kind: pki.KindAgent}, r.cfg.AgentCertLifetime)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	bound := Agent{Cluster: req.Cluster, KeyFingerprint: fp, Registered: r.cfg.Now().UTC(), NotAfter: issued.Cert.NotAfter.UTC()}
	if err := r.putAgent(ctx, bound, rev); err != nil {
		return Result{}, err
	}
	if err := r.createCluster(ctx, req); err != nil {
		return Result{}, err
	}
	r.log.Info("cluster registered", "cluster", req.Cluster, "key", fp, "not_after", bound.NotAfter)
	return Result{CertPEM: issued.CertPEM, CAPEM: r.ca.CertPEM, Cert: issued.Cert, NotAfter: bound.NotAfter, KeyFingerprint: fp}, nil
}

// recordPending stores fp as the name's pending key and returns the
// refusal.
func (r *Registry) recordPending(ctx context.Context, cluster string, rec *Agent, rev int64, fp string) error {
	next := Agent{Cluster: cluster}
	if rec != nil {
		next = *rec
	}
	if p := next.PendingKeyFingerprint; p != "" && p != fp {
		r.log.Warn("registration with a new key refused: another key is pending", "cluster", cluster, "key", fp, "pending_key", p)
		return fmt.Errorf("%w: cluster %q already has a key awaiting approval (%s), and a pending key is never replaced: this registration's key %s was not recorded; "+
			"an admin approves the pending key (tetherctl cluster approve %s --key-fingerprint %s) or rejects it (tetherctl cluster reject %s --key-fingerprint %s) first",
			ErrPendingApproval, cluster, p, fp, cluster, p, cluster, p)
	}
	if next.PendingKeyFingerprint != fp {
		next.PendingKeyFingerprint = fp
		if err := r.putAgent(ctx, next, rev); err != nil {
			return err
		}
		r.log.Warn("registration with a new key refused until approved", "cluster", cluster, "pending_key", fp)
	}
	bound := next.KeyFingerprint
	if bound == "" {
		bound = "a certificate minted outside registration"
	}
	return fmt.Errorf("%w: cluster %q is registered with another key (%s); an admin must approve the new key %s: tetherctl cluster approve %s --key-fingerprint %s",
		ErrPendingApproval, cluster, bound, fp, cluster, fp)
}

// Authorize returns nil when cert may speak for cluster: not removed, and
// the key bound to the name (when one is bound). It is called on every
// agent stream.
func (r *Registry) Authorize(ctx context.Context, cluster string, cert *x509.Certificate) error {
	rec, _, err := r.agent(ctx, cluster)
	if err != nil {
		return err
	}
	return authorize(rec, cert, r.cfg.Now())
}

// Agent returns the binding of cluster; ErrNotFound when there is none.
func (r *Registry) Agent(ctx context.Context, cluster string) (Agent, error) {
	rec, _, err := r.agent(ctx, cluster)
	if err != nil {
		return Agent{}, err
	}
	if rec == nil {
		return Agent{}, fmt.Errorf("%w: cluster %q has no registered agent", ErrNotFound, cluster)
	}
	return *rec, nil
}

// Remove revokes every certificate of cluster (a tombstone binding) and
// deletes its Cluster record, so that the scheduler places its replicas
// elsewhere. ErrNotFound when neither exists.
func (r *Registry) Remove(ctx context.Context, cluster string) error {
	rec, rev, err := r.agent(ctx, cluster)
	if err != nil {
		return err
	}
	exists, err := r.clusterExists(ctx, cluster)
	if err != nil {
		return err
	}
	if !exists && (rec == nil || rec.Removed != nil) {
		return fmt.Errorf("%w: cluster %q is not registered", ErrNotFound, cluster)
	}
	now := r.cfg.Now().UTC()
	tomb := Agent{Cluster: cluster, Removed: &now}
	if rec != nil {
		tomb.KeyFingerprint, tomb.Registered, tomb.NotAfter = rec.KeyFingerprint, rec.Registered, rec.NotAfter
	}
	if err := r.putAgent(ctx, tomb, rev); err != nil {
		return err
	}
	if _, err := r.st.Delete(ctx, store.ClusterKey(cluster), 0); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("delete cluster record %s: %w", cluster, err)
	}
	r.log.Info("cluster removed; its certificates are revoked", "cluster", cluster)
	return nil
}

// Approve binds cluster to its pending key, which must be fp: the next
// Register with that key succeeds, and the old key's certificate is refused
// from now on. An fp that is not a fingerprint is ErrInvalid.
func (r *Registry) Approve(ctx context.Context, cluster, fp string) (Agent, error) {
	return r.decide(ctx, cluster, fp, approve, "new key approved")
}

// Reject discards cluster's pending key, which must be fp, so that another
// registration may record its own: a pending key is never replaced.
func (r *Registry) Reject(ctx context.Context, cluster, fp string) (Agent, error) {
	return r.decide(ctx, cluster, fp, reject, "pending key rejected")
}

// decide applies an admin's decision on cluster's pending key fp (approve
// or reject) to its binding.
func (r *Registry) decide(ctx context.Context, cluster, fp string, decision func(Agent, string) (Agent, error), msg string) (Agent, error) {
	fp = strings.TrimSpace(fp)
	if err := validFingerprint(fp); err != nil {
		return Agent{}, err
	}
	rec, rev, err := r.agent(ctx, cluster)
	if err != nil {
		return Agent{}, err
	}
	if rec == nil {
		return Agent{}, fmt.Errorf("%w: cluster %q has no key awaiting approval", ErrNoPending, cluster)
	}
	next, err := decision(*rec, fp)
	if err != nil {
		return Agent{}, err
	}
	if err := r.putAgent(ctx, next, rev); err != nil {
		return Agent{}, err
	}
	r.log.Info(msg, "cluster", cluster, "key", fp)
	return next, nil
}

// agent reads the binding of cluster and its revision; nil, 0 when none.
func (r *Registry) agent(ctx context.Context, cluster string) (*Agent, int64, error) {
	kv, err := r.st.Get(ctx, store.AgentKey(cluster))
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var a Agent
	if err := json.Unmarshal(kv.Value, &a); err != nil {
		return nil, 0, fmt.Errorf("decode agent record %s: %w", cluster, err)
	}
	return &a, kv.Revision, nil
}

// putAgent writes a, conditional on the revision read (0: absent).
func (r *Registry) putAgent(ctx context.Context, a Agent, rev int64) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if rev == 0 {
		_, err = r.st.Create(ctx, store.AgentKey(a.Cluster), data)
	} else {
		_, err = r.st.Update(ctx, store.AgentKey(a.Cluster), data, rev)
	}
	if errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: the registration of cluster %q changed meanwhile; retry", ErrConflict, a.Cluster)
	}
	return err
}

func (r *Registry) clusterExists(ctx context.Context, cluster string) (bool, error) {
	_, err := r.st.Get(ctx, store.ClusterKey(cluster))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// createCluster writes the Cluster record of a registration unless one
// exists; what an admin set there stays.
func (r *Registry) createCluster(ctx context.Context, req Request) error {
	data, err := json.Marshal(NewRecord(req.Cluster, r.cfg.Now(), req.Topology, r.cfg.NewClustersCordoned))
	if err != nil {
		return err
	}
	if _, err := r.st.Create(ctx, store.ClusterKey(req.Cluster), data); err != nil && !errors.Is(err, store.ErrExists) {
		return fmt.Errorf("create cluster record %s: %w", req.Cluster, err)
	}
	return nil
}

// validName checks a cluster name: a DNS subdomain, as `tether-hub
// mint-agent` requires.
func validName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: cluster name: required", ErrInvalid)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("%w: cluster name %q: %s", ErrInvalid, name, strings.Join(errs, "; "))
	}
	return nil
}

// PendingKeys returns the fingerprint of every key awaiting approval, by
// cluster name.
func (r *Registry) PendingKeys(ctx context.Context) (map[string]string, error) {
	kvs, _, err := r.st.List(ctx, store.AgentsPrefix)
	if err != nil {
		return nil, fmt.Errorf("list agent records: %w", err)
	}
	out := map[string]string{}
	for _, kv := range kvs {
		var a Agent
		if err := json.Unmarshal(kv.Value, &a); err != nil {
			return nil, fmt.Errorf("decode agent record %s: %w", kv.Key, err)
		}
		if a.PendingKeyFingerprint != "" {
			out[a.Cluster] = a.PendingKeyFingerprint
		}
	}
	return out, nil
}
