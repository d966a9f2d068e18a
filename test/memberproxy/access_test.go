package memberproxy_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/kit"
)

// TestAccessDecisions: who decides what through the proxy. The hub's role
// gate refuses a viewer's exec and writes (a viewer still reads); a member
// whose agent may not impersonate refuses every proxied request; the
// agent's owner narrows the proxy to reads (--member-proxy=read-only) or
// turns it off; the hub writes an audit line for each request.
func TestAccessDecisions(t *testing.T) {
	e := startAccess(t)
	admin := e.kubeconfig(t, "admin", e.admin, "edge-1", "edge-2")
	viewer := e.kubeconfig(t, "viewer", e.user(t, "vera", hubv1.Role_ROLE_READ_ONLY), "edge-1")
	e.waitProxy(t, admin)
	e.must(t, e.member("edge-1"), "create", "clusterrolebinding", "tether-admins", "--clusterrole=cluster-admin", "--group=tether:role:admin")
	e.must(t, e.member("edge-1"), "create", "clusterrolebinding", "tether-viewers", "--clusterrole=view", "--group=tether:role:viewer")
	e.must(t, e.member("edge-1"), "create", "clusterrolebinding", "tether-editors", "--clusterrole=edit", "--group=tether:role:editor")
	e.runPod(t, admin, "web")

	t.Run("viewer reads", func(t *testing.T) {
		if out := e.must(t, viewer, "get", "pods"); !strings.Contains(out, "web") {
			t.Errorf("viewer get pods = %q; want pod web", out)
		}
	})
	t.Run("viewer refused exec and writes at the hub", func(t *testing.T) {
		for _, args := range [][]string{{"exec", "web", "--", "echo", "x"}, {"delete", "pod", "web"}, {"port-forward", "pod/web", "0:80"}} {
			msg := e.refused(t, viewer, args...)
			if !strings.Contains(msg, `user "vera"`) || !strings.Contains(msg, "(the read-only role)") {
				t.Errorf("viewer kubectl %s: %s; want the hub's read-only refusal", strings.Join(args, " "), msg)
			}
		}
	})
	t.Run("namespaced editor", func(t *testing.T) {
		ed := e.kubeconfig(t, "editor", e.userIn(t, "ed", hubv1.Role_ROLE_EDITOR, "default"), "edge-1")
		if out := e.must(t, ed, "exec", "web", "--", "echo", "in default"); strings.TrimSpace(out) != "in default" {
			t.Errorf("editor of default: exec in default = %q", out)
		}
		for _, args := range [][]string{{"get", "pods", "-n", "kube-system"}, {"get", "pods", "-A"}} {
			msg := e.refused(t, ed, args...)
			if !strings.Contains(msg, `user "ed"`) {
				t.Errorf("editor of default: kubectl %s: %s; want the hub's refusal naming ed", strings.Join(args, " "), msg)
			}
		}
	})
	t.Run("session ends when its user loses the right to it", func(t *testing.T) {
		rita := e.kubeconfig(t, "rita", e.userIn(t, "rita", hubv1.Role_ROLE_EDITOR, "default"), "edge-1")
		watch := e.startWatch(t, rita)
		e.setRole(t, "rita", hubv1.Role_ROLE_EDITOR, "team-x")
		watch.wantEnded(t, "rita's role narrowed to team-x")
		rex := e.kubeconfig(t, "rex", e.userIn(t, "rex", hubv1.Role_ROLE_READ_ONLY), "edge-1")
		watch = e.startWatch(t, rex)
		e.tetherctl(t, "user", "revoke", "rex")
		watch.wantEnded(t, "rex revoked")
	})
	t.Run("member refuses an agent without impersonation", func(t *testing.T) {
		edge2 := e.kubeconfig(t, "admin-edge-2", e.admin, "edge-2")
		deadline := time.Now().Add(30 * time.Second)
		pods := []string{"get", "--raw", "/api/v1/namespaces/default/pods"} // raw: kubectl's discovery hides the message
		msg := e.refused(t, edge2, pods...)
		for strings.Contains(msg, "offers no proxy") && time.Now().Before(deadline) { // the agent's Listen is not up yet
			time.Sleep(200 * time.Millisecond)
			msg = e.refused(t, edge2, pods...)
		}
		if !strings.Contains(msg, `User "system:serviceaccount:default:agent" cannot impersonate`) {
			t.Errorf("get pods on edge-2, whose agent may not impersonate: %s; want the member's refusal to impersonate", msg)
		}
	})
	t.Run("audit", func(t *testing.T) {
		log, err := os.ReadFile(filepath.Join(e.dir, "hub.log"))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, l := range strings.Split(string(log), "\n") {
			if strings.Contains(l, "proxied request") && strings.Contains(l, "user=vera") && strings.Contains(l, "verb=connect") &&
				strings.Contains(l, "code=403") && strings.Contains(l, "cluster=edge-1") && strings.Contains(l, "resource=pods/exec") {
				found = true
			}
		}
		if !found {
			t.Errorf("hub log has no audit line of vera's refused exec on edge-1 (user, cluster, verb, resource, code)")
		}
		agentLog, err := os.ReadFile(filepath.Join(e.dir, "agents", "edge-1", "agent.log"))
		if err != nil {
			t.Fatal(err)
		}
		found = false
		for _, l := range strings.Split(string(agentLog), "\n") {
			found = found || strings.Contains(l, "proxied request") && strings.Contains(l, "user=tether:ed") &&
				strings.Contains(l, "resource=pods/exec") && strings.Contains(l, "namespace=default") && strings.Contains(l, "code=")
		}
		if !found {
			t.Errorf("edge-1's agent log has no audit line of ed's exec in default (user, verb, resource, namespace, code)")
		}
	})
	t.Run("agent read-only", func(t *testing.T) {
		e.restartAgent(t, "edge-1", "--member-proxy=read-only")
		e.waitProxy(t, admin)
		e.must(t, admin, "get", "pods")
		msg := e.refused(t, admin, "exec", "web", "--", "echo", "x")
		if !strings.Contains(msg, "--member-proxy=read-only") {
			t.Errorf("admin exec on a read-only agent: %s; want the agent's refusal naming --member-proxy=read-only", msg)
		}
	})
	t.Run("agent off", func(t *testing.T) {
		e.restartAgent(t, "edge-1", "--member-proxy=off")
		deadline := time.Now().Add(30 * time.Second)
		for {
			msg := e.refused(t, admin, "get", "pods")
			if strings.Contains(msg, "offers no proxy") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("get pods through an agent with --member-proxy=off: %s; want the hub's 'offers no proxy'", msg)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// startAccess starts edge-1 (its agent with the kit's admin credentials)
// and edge-2, whose agent's credentials allow everything but impersonation.
func startAccess(t *testing.T) *env {
	return startOpts(t, []string{"edge-1", "edge-2"}, true, func(o *fleet.Options) {
		o.AgentKubeconfig = func(c *kit.Cluster) (string, error) {
			if c.Name != "edge-2" {
				return c.KubeconfigPath, nil
			}
			return noImpersonation(t, c)
		}
	})
}

// noImpersonation makes a service account that may do anything but
// impersonate, and returns a kubeconfig with its token.
func noImpersonation(t *testing.T, c *kit.Cluster) (string, error) {
	kubectl, err := kit.Kubectl()
	if err != nil {
		return "", err
	}
	e := &env{kubectl: kubectl}
	e.must(t, c.KubeconfigPath, "create", "serviceaccount", "agent", "-n", "default")
	e.must(t, c.KubeconfigPath, "create", "clusterrole", "no-impersonation", "--verb=get,list,watch,create,update,patch,delete,deletecollection", "--resource=*.*")
	e.must(t, c.KubeconfigPath, "create", "clusterrolebinding", "agent", "--clusterrole=no-impersonation", "--serviceaccount=default:agent")
	token := strings.TrimSpace(e.must(t, c.KubeconfigPath, "create", "token", "agent", "-n", "default", "--duration=2h"))
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["m"] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: c.CAData}
	cfg.AuthInfos["m"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["m"] = &clientcmdapi.Context{Cluster: "m", AuthInfo: "m"}
	cfg.CurrentContext = "m"
	path := filepath.Join(c.Dir, "agent-no-impersonation.kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}

// user creates a fleet-wide hub user and returns its credentials.
func (e *env) user(t *testing.T, name string, role hubv1.Role) client.Config {
	t.Helper()
	return e.userIn(t, name, role)
}

// userIn creates a hub user with role in namespaces (none: fleet-wide)
// and returns its credentials.
func (e *env) userIn(t *testing.T, name string, role hubv1.Role, namespaces ...string) client.Config {
	t.Helper()
	c, err := e.f.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.CreateUser(ctx, &hubv1.CreateUserRequest{Name: name, Role: role, Namespaces: namespaces})
	if err != nil {
		t.Fatalf("CreateUser %s: %v", name, err)
	}
	cfg := e.admin
	cfg.User, cfg.CertPEM, cfg.KeyPEM = name, resp.GetCertificatePem(), resp.GetPrivateKeyPem()
	return cfg
}

// restartAgent restarts cluster's agent with args added.
func (e *env) restartAgent(t *testing.T, cluster string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.f.RestartWith(ctx, fleet.RoleAgent, cluster, args...); err != nil {
		t.Fatal(err)
	}
}

// proxiedWatch is a kubectl get pods -w running through the hub.
type proxiedWatch struct {
	done  chan error
	start time.Time
}

// startWatch starts kubectl get pods -w in default through the hub and
// waits for its first row (the session is open).
func (e *env) startWatch(t *testing.T, kubeconfig string) *proxiedWatch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, e.kubectl, "--kubeconfig", kubeconfig, "get", "pods", "-w", "-n", "default")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		first <- line
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case line := <-first:
		if !strings.Contains(line, "NAME") && !strings.Contains(line, "web") {
			t.Fatalf("kubectl get pods -w: first line %q; want the table", line)
		}
	case <-ctx.Done():
		t.Fatal("kubectl get pods -w through the hub printed nothing")
	}
	w := &proxiedWatch{done: make(chan error, 1), start: time.Now()}
	go func() { w.done <- cmd.Wait() }()
	return w
}

// wantEnded waits for the watch to end: within the proxy's recheck
// interval (2 s) and some slack, long before its idle timeout (an hour).
func (w *proxiedWatch) wantEnded(t *testing.T, why string) {
	t.Helper()
	select {
	case <-w.done:
		t.Logf("%s: the watch through the hub ended %s after", why, time.Since(w.start).Round(100*time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: kubectl get pods -w through the hub still runs 20 s later; want the hub to end the session", why)
	}
}

// setRole sets a user's role through the hub's API.
func (e *env) setRole(t *testing.T, name string, role hubv1.Role, namespaces ...string) {
	t.Helper()
	c, err := e.f.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.SetUserRole(ctx, name, role, namespaces); err != nil {
		t.Fatalf("SetUserRole %s: %v", name, err)
	}
}
