package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/tetherproj/tether/hub/adminconf"
	"github.com/tetherproj/tether/hub/authority"
	"github.com/tetherproj/tether/hub/cabootstrap"
	"github.com/tetherproj/tether/hub/memberproxy"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/durable"
)

// base is what the hub opens before it builds anything: the store and
// its identity, the CA, the bound ports, and whether the store may make
// agents delete.
type base struct {
	st       *store.Store
	identity string
	ca       *pki.CA
	lis      *listeners
	auth     *authority.Authority
}

// addr is the gRPC port's address.
func (b *base) addr() string { return b.lis.grpc.Addr().String() }

// alone: the store is this process's embedded etcd, so this is the only
// replica there can be.
func (h *Hub) alone() bool { return len(h.cfg.EtcdEndpoints) == 0 }

func (b *base) close() {
	b.lis.close()
	b.st.Close()
}

// open opens the store, the CA and the ports, and checks the store
// against what the hub recorded next to its CA (hub/authority).
func (h *Hub) open(ctx context.Context) (*base, error) {
	st, identity, err := h.openStore(ctx)
	if err != nil {
		return nil, err
	}
	ca, lis, err := h.listen(ctx, st)
	if err != nil {
		st.Close()
		return nil, err
	}
	b := &base{st: st, identity: identity, ca: ca, lis: lis}
	b.auth, err = authority.Check(ctx, st, h.cfg.path(PKIDir), authority.Options{Identity: identity,
		Alone: h.alone(), Adopt: h.cfg.adoption()}, h.logger)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("store authority: %w", err)
	}
	return b, nil
}

// openStore opens the embedded or external etcd and reads the hub's
// identity.
func (h *Hub) openStore(ctx context.Context) (*store.Store, string, error) {
	if err := os.MkdirAll(h.cfg.DataDir, 0o700); err != nil {
		return nil, "", fmt.Errorf("data dir: %w", err)
	}
	st, err := store.Open(ctx, store.Config{DataDir: h.cfg.DataDir, Endpoints: h.cfg.EtcdEndpoints, TLS: h.cfg.EtcdTLS, QuotaBytes: h.cfg.EmbeddedQuotaBytes}, h.logger)
	if err != nil {
		return nil, "", fmt.Errorf("open store: %w", err)
	}
	// A replica of an adjacent version may share the store (rolling
	// upgrades); one that cannot read its format stops here.
	if _, err := st.CheckFormat(ctx); err != nil {
		st.Close()
		return nil, "", fmt.Errorf("store format: %w", err)
	}
	identity, err := st.Identity(ctx, h.cfg.restoredIdentity())
	if errors.Is(err, store.ErrIdentityLost) {
		err = fmt.Errorf("%w; a new identity would make every agent take this hub for another one. Start once with "+
			"--adopt-identity ID, ID being the identity the agents hold (tether-agent logs it at start as hub_identity), to give it back", err)
	}
	if err != nil {
		st.Close()
		return nil, "", fmt.Errorf("hub identity: %w", err)
	}
	return st, identity, nil
}

// listeners are the hub's bound ports.
type listeners struct {
	grpc    net.Listener
	metrics net.Listener // nil without --metrics-listen
	proxy   net.Listener // nil without --proxy-listen
}

func (l *listeners) close() {
	l.grpc.Close()
	for _, o := range []net.Listener{l.metrics, l.proxy} {
		if o != nil {
			o.Close()
		}
	}
}

// listen opens the CA (hub/cabootstrap) and binds the ports, so that a
// port in use fails the start before anything runs.
func (h *Hub) listen(ctx context.Context, st *store.Store) (*pki.CA, *listeners, error) {
	ca, err := cabootstrap.Open(ctx, st, cabootstrap.Config{Dir: h.cfg.path(PKIDir), CertFile: h.cfg.CACertFile,
		KeyFile: h.cfg.CAKeyFile, EncryptionKeyFile: h.cfg.CAEncryptionKeyFile}, h.logger)
	if err != nil {
		return nil, nil, err
	}
	lis := &listeners{}
	if lis.grpc, err = net.Listen("tcp", h.cfg.Listen); err != nil {
		return nil, nil, fmt.Errorf("listen: %w", err)
	}
	if h.cfg.MetricsListen != "" {
		if lis.metrics, err = net.Listen("tcp", h.cfg.MetricsListen); err != nil {
			lis.grpc.Close()
			return nil, nil, fmt.Errorf("metrics listen: %w", err)
		}
		h.logger.Info("serving metrics", "address", lis.metrics.Addr().String())
	}
	if h.cfg.ProxyListen != "" {
		if lis.proxy, err = net.Listen("tcp", h.cfg.ProxyListen); err != nil {
			lis.close()
			return nil, nil, fmt.Errorf("proxy listen: %w", err)
		}
		h.logger.Info("serving the member proxy", "address", lis.proxy.Addr().String(), "path", memberproxy.PathPrefix+"NAME/proxy/")
	}
	return ca, lis, nil
}

// adminConf is the hub's admin.conf, for a hub listening on addr.
func (h *Hub) adminConf(ca *pki.CA, addr string) adminconf.File {
	return adminconf.File{Path: h.cfg.path(AdminConfFile), CA: ca, Server: dialAddr(addr), Logger: h.logger}
}

// announce writes admin.conf (or renews it) and hub.addr, then logs
// what a user needs to connect: the address and the CA pin.
func (h *Hub) announce(ca *pki.CA, addr, identity string) error {
	server := dialAddr(addr)
	if err := h.adminConf(ca, addr).Ensure(); err != nil {
		return err
	}
	if err := durable.WriteFile(h.cfg.path(AddrFile), []byte(server+"\n"), 0o600); err != nil {
		return err
	}
	h.logger.Info("hub serving", "address", addr, "ca_hash", ca.Hash(), "hub_identity", identity,
		"admin_conf", h.cfg.path(AdminConfFile), "data_dir", h.cfg.DataDir, "external_etcd", len(h.cfg.EtcdEndpoints) > 0)
	return nil
}
