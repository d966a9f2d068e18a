// Package adminconf keeps the hub's admin credentials file,
// DataDir/admin.conf, usable: written on the hub's first start, its
// certificate renewed before it expires.
//
//	f := adminconf.File{Path: path, CA: ca, Server: "127.0.0.1:7443", Logger: logger}
//	err := f.Ensure() // at start: written if missing, renewed if due
//	err = f.Run(ctx)  // while the hub runs: renewed if due, checked hourly
//
// A new file holds an admin certificate (identity User, kind admin) valid
// for CertLifetime, one year, and names File.Server. Of an existing file
// only the certificate, key and CA are replaced, once two thirds of the
// certificate's validity have passed, for the identity it had; the rest
// (a server the user edited) is kept. A file whose certificate another CA
// signed is never renewed (logged at start), and one that exists but
// cannot be read fails File.Ensure: both are the user's to remove. Each
// write replaces the file whole (internal/durable): a reader sees the old
// or the new one.
//
// It imports hub/pki, internal/certs, internal/clientconfig,
// internal/durable and go-hclog.
package adminconf
