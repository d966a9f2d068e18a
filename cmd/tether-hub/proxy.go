package main

import (
	"flag"

	"github.com/tetherproj/tether/hub"
	"github.com/tetherproj/tether/hub/memberproxy"
)

// proxyFlags are the member proxy's flags (hub/memberproxy).
func proxyFlags(fs *flag.FlagSet, cfg *hub.Config) {
	fs.StringVar(&cfg.ProxyListen, "proxy-listen", "", "host:port serving each member cluster's Kubernetes API over HTTPS at "+
		memberproxy.PathPrefix+"NAME/proxy/, through its agent's own connection (`tetherctl kubeconfig --cluster NAME` writes a kubeconfig for it); empty: off")
	fs.IntVar(&cfg.Proxy.SessionsPerUser, "proxy-sessions-per-user", memberproxy.DefaultSessionsPerUser, "member proxy requests in flight per user (an exec, a log follow, a watch count until they end); past it: 429")
	fs.IntVar(&cfg.Proxy.SessionsPerCluster, "proxy-sessions-per-cluster", memberproxy.DefaultSessionsPerCluster, "member proxy requests in flight per cluster; past it: 429")
	fs.IntVar(&cfg.Proxy.BytesPerSecondPerUser, "proxy-bytes-per-second-per-user", 0, "bytes per second all of a user's member proxy sessions carry, both ways; 0: no bound")
	fs.IntVar(&cfg.Proxy.BytesPerSecondPerCluster, "proxy-bytes-per-second-per-cluster", 0, "bytes per second all member proxy sessions to one cluster carry, both ways; 0: no bound")
	fs.DurationVar(&cfg.Proxy.IdleTimeout, "proxy-idle-timeout", memberproxy.DefaultIdleTimeout, "a member proxy session that carried no byte for this long is ended")
}
