package cabootstrap

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
)

// Store is what opening the CA reads and writes; *store.Store satisfies
// it.
type Store interface {
	Get(ctx context.Context, key string) (store.KV, error)
	Create(ctx context.Context, key string, value []byte) (int64, error)
}

// Config says where the hub's CA comes from: CertFile and KeyFile, or
// else the CA sealed in the store with EncryptionKeyFile's key, or else
// Dir.
type Config struct {
	// Dir is DataDir/pki: the CA created on first start when no other
	// source is given; it is created whatever the source, as it also holds
	// hub/authority's record.
	Dir string
	// CertFile and KeyFile are the CA's files (--ca-cert, --ca-key).
	CertFile, KeyFile string
	// EncryptionKeyFile holds the key of the CA sealed in the store
	// (--ca-encryption-key-file).
	EncryptionKeyFile string
}

// Open returns the hub's CA from where cfg says (files, sealed in the
// store, or cfg.Dir) and checks it against the CA recorded in the store,
// recording it if the store has none: every replica on one etcd must sign
// with one CA, or an agent registered through one could not talk to
// another.
func Open(ctx context.Context, st Store, cfg Config, logger hclog.Logger) (*pki.CA, error) {
	recorded, err := recordedCAHash(ctx, st)
	if err != nil {
		return nil, err
	}
	ca, source, err := load(ctx, st, cfg, recorded, logger)
	if err != nil {
		return nil, fmt.Errorf("certificate authority: %w", err)
	}
	// DataDir/pki also holds hub/authority's record, whatever the CA's source.
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("certificate authority: %w", err)
	}
	if recorded == "" {
		if recorded, err = recordCAHash(ctx, st, ca.Hash()); err != nil {
			return nil, err
		}
	}
	if recorded != ca.Hash() {
		return nil, fmt.Errorf("certificate authority: this replica's CA %s (%s) is not the hub's CA %s, recorded in etcd (%s) by the first replica "+
			"that started on this store, which agents pin; every replica on one etcd must use that CA: give this one the same CA "+
			"with --ca-cert/--ca-key, or the same --ca-encryption-key-file as the others; "+
			"only to replace the hub's CA on purpose (every agent must then register again), delete %s",
			ca.Hash(), source, recorded, store.CAHashKey, store.CAHashKey)
	}
	logger.Info("certificate authority", "ca_hash", ca.Hash(), "source", source)
	return ca, nil
}

// load loads the CA from its configured source, which it also returns.
// recorded is the hash in the store, "" when none.
func load(ctx context.Context, st Store, cfg Config, recorded string, logger hclog.Logger) (*pki.CA, string, error) {
	dir := cfg.Dir
	switch {
	case cfg.CertFile != "":
		ca, err := pki.LoadCA(cfg.CertFile, cfg.KeyFile)
		if err == nil {
			warnUnusedCA(dir, ca, logger)
		}
		return ca, "--ca-cert " + cfg.CertFile, err
	case cfg.EncryptionKeyFile != "":
		key, err := pki.ReadEncryptionKey(cfg.EncryptionKeyFile)
		if err != nil {
			return nil, "", err
		}
		ca, err := sealedCA(ctx, st, key, recorded)
		if err == nil {
			warnUnusedCA(dir, ca, logger)
		}
		return ca, "etcd " + store.SealedCAKey, err
	case recorded != "" && !pki.HasCA(dir):
		// Creating a CA here could only be refused: the store has one.
		return nil, "", fmt.Errorf("no CA in %s, and the hub's CA %s is recorded in etcd (%s) by another replica: "+
			"give this replica that CA with --ca-cert/--ca-key or the others' --ca-encryption-key-file, or copy it into %s",
			dir, recorded, store.CAHashKey, dir)
	default:
		ca, err := pki.LoadOrCreateCA(dir)
		return ca, dir, err
	}
}

// sealedCA opens the CA sealed in the store, or creates and seals one when
// the store has none and no CA is recorded. Of replicas racing on an empty
// store, the first write wins and the others open it.
func sealedCA(ctx context.Context, st Store, key []byte, recorded string) (*pki.CA, error) {
	kv, err := st.Get(ctx, store.SealedCAKey)
	if err == nil {
		ca, err := pki.OpenSealed(kv.Value, key)
		if err != nil {
			return nil, fmt.Errorf("open the CA sealed in etcd (%s) with --ca-encryption-key-file: give every replica the key file "+
				"the first one was given: %w", store.SealedCAKey, err)
		}
		return ca, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("read sealed CA: %w", err)
	}
	if recorded != "" {
		return nil, fmt.Errorf("no CA sealed in etcd (%s), and the hub's CA %s is recorded (%s): the first replica was given its CA as files or "+
			"in its data dir; give this replica that CA with --ca-cert/--ca-key instead of --ca-encryption-key-file",
			store.SealedCAKey, recorded, store.CAHashKey)
	}
	ca, err := pki.NewCA()
	if err != nil {
		return nil, err
	}
	data, err := ca.Seal(key)
	if err != nil {
		return nil, err
	}
	if _, err := st.Create(ctx, store.SealedCAKey, data); errors.Is(err, store.ErrExists) {
		return sealedCA(ctx, st, key, recorded)
	} else if err != nil {
		return nil, fmt.Errorf("store sealed CA: %w", err)
	}
	return ca, nil
}

// recordedCAHash is the CA hash recorded in the store, "" when none.
func recordedCAHash(ctx context.Context, st Store) (string, error) {
	kv, err := st.Get(ctx, store.CAHashKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read recorded CA hash: %w", err)
	}
	return string(kv.Value), nil
}

// recordCAHash records hash if the store has none yet and returns the one
// recorded: another replica may have recorded its own first.
func recordCAHash(ctx context.Context, st Store, hash string) (string, error) {
	if _, err := st.Create(ctx, store.CAHashKey, []byte(hash)); err != nil && !errors.Is(err, store.ErrExists) {
		return "", fmt.Errorf("record CA hash: %w", err)
	}
	return recordedCAHash(ctx, st)
}

// warnUnusedCA warns when dir holds another CA than the one given, which
// the hub ignores (and `tether-hub mint-agent --data-dir` would use).
func warnUnusedCA(dir string, ca *pki.CA, logger hclog.Logger) {
	if !pki.HasCA(dir) {
		return
	}
	if old, err := pki.LoadOrCreateCA(dir); err != nil || old.Hash() != ca.Hash() {
		logger.Warn("the data dir holds another CA, which is not used: the CA given replaces it", "dir", dir, "given_ca_hash", ca.Hash())
	}
}
