// Package cabootstrap opens the hub's certificate authority at start and
// makes every replica on one store agree on it:
//
//	ca, err := cabootstrap.Open(ctx, st, cabootstrap.Config{Dir: pkiDir,
//		CertFile: certFile, KeyFile: keyFile, EncryptionKeyFile: keyFile}, logger)
//
// Open takes the CA from the first source configured: the files
// Config.CertFile and Config.KeyFile; or the CA sealed in etcd
// (store.SealedCAKey) with Config.EncryptionKeyFile's key, created and
// sealed by the first replica (of replicas racing on an empty store the
// first write wins and the others open it); or else Config.Dir
// (DataDir/pki), created on first start (hub/pki). The first replica on a
// store records the CA's hash there (store.CAHashKey); a replica whose CA
// differs is refused, naming both hashes, as an agent registered through
// one replica could not talk to another. A data directory that holds
// another CA than the one given is logged and left alone.
//
// It imports hub/pki, hub/store and go-hclog.
package cabootstrap
