package membership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
)

// Defaults of Config.
const (
	// DefaultTokenTTL is a token's lifetime when none is asked for (the
	// API's documented default).
	DefaultTokenTTL = 24 * time.Hour
	// MaxTokenTTL caps a token's lifetime: a bootstrap token is a
	// short-lived secret, not a credential.
	MaxTokenTTL = 7 * 24 * time.Hour
	// DefaultAgentCertLifetime is how long a registered (or renewed) agent
	// certificate is valid: a year, as `tether-hub mint-agent`'s; agents
	// renew theirs over the stream at about 75% of it.
	DefaultAgentCertLifetime = 365 * 24 * time.Hour
	// maxUses caps a token's use count.
	maxUses = 10000
	// casAttempts bounds the retries of a conditional write that lost a
	// race (another registration with the same token or name).
	casAttempts = 5
)

// Config tunes a Registry; zero values are the defaults.
type Config struct {
	// AgentCertLifetime is the lifetime of the certificates Register signs.
	AgentCertLifetime time.Duration
	// NewClustersCordoned makes the Cluster records Register creates start
	// cordoned (TaintCordoned) until an admin uncordons them.
	NewClustersCordoned bool
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Registry issues tokens and registers agents over the store and the CA.
// Its methods are safe for concurrent use: every write is conditional on
// the revision it read.
type Registry struct {
	st  *store.Store
	ca  *pki.CA
	cfg Config
	log hclog.Logger
	// redeemMu serializes redeem on this replica: registrations that share
	// a token (a fleet installed at once with one token) take turns at its
	// use count instead of losing its compare-and-swap to each other until
	// casAttempts runs out. Replicas still race, and retry.
	redeemMu sync.Mutex
}

// NewRegistry returns the registry over st and ca.
func NewRegistry(st *store.Store, ca *pki.CA, cfg Config, logger hclog.Logger) *Registry {
	if cfg.AgentCertLifetime <= 0 {
		cfg.AgentCertLifetime = DefaultAgentCertLifetime
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Registry{st: st, ca: ca, cfg: cfg, log: logger.Named("tokens")}
}

// CA is the hub's CA: its Hash is what agents pin, its CertPEM the bundle
// they trust.
func (r *Registry) CA() *pki.CA { return r.ca }

// TokenOptions describe a token to create.
type TokenOptions struct {
	// TTL is its lifetime: 0 for DefaultTokenTTL, capped at MaxTokenTTL.
	TTL time.Duration
	// Cluster restricts it to one cluster name; empty for any.
	Cluster string
	// Uses is how many registrations it allows; 0 for any number.
	Uses        int
	Description string
}

// CreateToken issues a token and returns it whole ("<id>.<secret>", shown
// only now) with its stored description.
func (r *Registry) CreateToken(ctx context.Context, o TokenOptions) (string, Token, error) {
	switch {
	case o.TTL < 0:
		return "", Token{}, fmt.Errorf("%w: ttl %s: must be positive", ErrInvalid, o.TTL)
	case o.Uses < 0 || o.Uses > maxUses:
		return "", Token{}, fmt.Errorf("%w: uses %d: want 0 (unlimited) to %d", ErrInvalid, o.Uses, maxUses)
	case o.TTL > MaxTokenTTL:
		return "", Token{}, fmt.Errorf("%w: ttl %s is over the limit of %s: bootstrap tokens are short-lived", ErrInvalid, o.TTL, MaxTokenTTL)
	}
	if o.Cluster != "" {
		if err := validName(o.Cluster); err != nil {
			return "", Token{}, err
		}
	}
	if o.TTL == 0 {
		o.TTL = DefaultTokenTTL
	}
	r.prune(ctx)
	now := r.cfg.Now().UTC() // not truncated: a 1s token must live 1s
	for range casAttempts {
		id, secret, err := generate()
		if err != nil {
			return "", Token{}, err
		}
		t := Token{ID: id, SecretHash: hashSecret(secret), Cluster: o.Cluster, Uses: o.Uses,
			Created: now, Expires: now.Add(o.TTL), Description: o.Description}
		data, _ := json.Marshal(t)
		_, err = r.st.Create(ctx, store.TokenKey(id), data)
		if errors.Is(err, store.ErrExists) {
			continue // one chance in 36^6 per token: draw another id
		}
		if err != nil {
			return "", Token{}, fmt.Errorf("store token %s: %w", id, err)
		}
		r.log.Info("bootstrap token created", "token_id", id, "cluster", o.Cluster, "uses", o.Uses, "expires", t.Expires)
		return id + "." + secret, t, nil
	}
	return "", Token{}, fmt.Errorf("%w: no free token id after %d attempts", ErrConflict, casAttempts)
}

// ListTokens returns the usable tokens, by expiry.
func (r *Registry) ListTokens(ctx context.Context) ([]Token, error) {
	r.prune(ctx)
	all, err := r.tokens(ctx)
	if err != nil {
		return nil, err
	}
	now := r.cfg.Now()
	var out []Token
	for _, t := range all {
		if t.tok.Usable(now) {
			out = append(out, t.tok)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Expires.Before(out[j].Expires) })
	return out, nil
}

// DeleteToken revokes the token id (a whole token is accepted too).
func (r *Registry) DeleteToken(ctx context.Context, idOrToken string) error {
	id, err := ParseID(idOrToken)
	if err != nil {
		return err
	}
	if _, err := r.st.Delete(ctx, store.TokenKey(id), 0); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: no token with id %q", ErrNotFound, id)
	} else if err != nil {
		return err
	}
	r.log.Info("bootstrap token deleted", "token_id", id)
	return nil
}

// storedToken is a token with the revision it was read at.
type storedToken struct {
	tok Token
	rev int64
}

func (r *Registry) tokens(ctx context.Context) ([]storedToken, error) {
	kvs, _, err := r.st.List(ctx, store.TokensPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]storedToken, 0, len(kvs))
	for _, kv := range kvs {
		var t Token
		if err := json.Unmarshal(kv.Value, &t); err != nil {
			r.log.Warn("unreadable token record skipped", "key", kv.Key, "error", err)
			continue
		}
		out = append(out, storedToken{tok: t, rev: kv.Revision})
	}
	return out, nil
}

// prune deletes expired tokens; a failure only leaves them for next time.
func (r *Registry) prune(ctx context.Context) {
	all, err := r.tokens(ctx)
	if err != nil {
		return
	}
	now := r.cfg.Now()
	for _, t := range all {
		if !now.Before(t.tok.Expires) {
			_, _ = r.st.Delete(ctx, store.TokenKey(t.tok.ID), t.rev)
		}
	}
}

// token reads the token of id; ErrRefused when there is none.
func (r *Registry) token(ctx context.Context, id string) (storedToken, error) {
	kv, err := r.st.Get(ctx, store.TokenKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return storedToken{}, fmt.Errorf("%w: unknown token id %q or wrong secret", ErrRefused, id)
	}
	if err != nil {
		return storedToken{}, err
	}
	var t Token
	if err := json.Unmarshal(kv.Value, &t); err != nil {
		return storedToken{}, fmt.Errorf("decode token %s: %w", id, err)
	}
	return storedToken{tok: t, rev: kv.Revision}, nil
}

// checkToken checks token for cluster without using it up.
func (r *Registry) checkToken(ctx context.Context, token, cluster string) error {
	id, secret, err := Parse(token)
	if err != nil {
		return err
	}
	t, err := r.token(ctx, id)
	if err != nil {
		return err
	}
	return t.tok.check(secret, cluster, r.cfg.Now())
}

// redeem uses token once for cluster: checked again and counted under the
// revision read, so concurrent registrations cannot both take its last use.
func (r *Registry) redeem(ctx context.Context, token, cluster string) error {
	id, secret, err := Parse(token)
	if err != nil {
		return err
	}
	r.redeemMu.Lock()
	defer r.redeemMu.Unlock()
	for range casAttempts {
		t, err := r.token(ctx, id)
		if err != nil {
			return err
		}
		if err := t.tok.check(secret, cluster, r.cfg.Now()); err != nil {
			return err
		}
		t.tok.Used++
		data, _ := json.Marshal(t.tok)
		_, err = r.st.Update(ctx, store.TokenKey(id), data, t.rev)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: token %q was deleted", ErrRefused, id)
		}
		return err
	}
	return fmt.Errorf("%w: token %q is being used concurrently; retry", ErrConflict, id)
}
