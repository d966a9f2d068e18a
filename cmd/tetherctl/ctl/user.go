package ctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/durationpb"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/internal/clientconfig"
)

func init() { commands = append(commands, newUser) }

const userCreateLong = `Issues a client certificate for a user and writes a config file with it
(the format of admin.conf): the hub's address from your own config, the hub
CA, the certificate and its key. The key is made here and never leaves this
machine: the hub signs a certificate request. --role viewer may read
(get, list, watch, placements, simulate; Secrets without their data);
editor also applies and deletes templates, PropagationPolicies and
OverridePolicies; admin may do everything. --namespace (repeatable, or a
comma list) binds the role to those namespaces: the user then reads and
writes nothing elsewhere, and nothing cluster-scoped (cluster records
aside, which any role reads). Without it the role is fleet-wide; only a
fleet-wide admin writes cluster-scoped objects (ClusterPropagationPolicy,
ClusterOverridePolicy, customizations, CRDs, Namespaces) and administers
clusters, tokens and users. The role is stored on the hub for NAME:
tetherctl user set-role changes it, for connections already open too.

The file is written with mode 0600 and never overwrites an existing one.
--pem DIR also (or instead) writes the same credentials as PEM files for
programs in any language (grpcurl, other gRPC clients): DIR/ca.pem (the hub
CA to trust), DIR/cert.pem (the certificate) and DIR/key.pem (its key,
mode 0600); DIR is made (mode 0700) if missing, and none of the three may
exist yet. tetherctl user revoke NAME ends the user's access before the certificate
expires.`

const userRevokeLong = `Revokes every certificate issued to user NAME until now, on every hub
replica: their calls are refused (Unauthenticated, naming the revocation)
and their open watches end. The revocation is stored in the hub's etcd, so
it survives restarts and holds through any replica. A certificate issued
to NAME afterwards (tetherctl user create NAME) is accepted; one issued in
the same second as the revocation is refused too. You cannot revoke the
user you are connected as.`

// userRoles maps --role to the API's roles.
var userRoles = map[string]hubv1.Role{"viewer": hubv1.Role_ROLE_READ_ONLY, "editor": hubv1.Role_ROLE_EDITOR, "admin": hubv1.Role_ROLE_ADMIN}

// roleFlag reads --role.
func roleFlag(name string) (hubv1.Role, error) {
	role, ok := userRoles[name]
	if !ok {
		return role, fmt.Errorf("--role %q: want viewer, editor or admin", name)
	}
	return role, nil
}

func newUser(s IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "issue and revoke credentials for users",
	}
	cmd.AddCommand(newUserCreate(s), newUserSetRole(s), newUserRoles(s), newUserRevoke(s), newUserRevoked(s))
	return cmd
}

// userCreateFlags are the options of user create.
type userCreateFlags struct {
	role, out, pem string
	namespaces     []string
	ttl            time.Duration
}

func newUserCreate(s IO) *cobra.Command {
	var f userCreateFlags
	cmd := &cobra.Command{
		Use:   "create NAME --role viewer|editor|admin [--namespace NS]... -o FILE [--pem DIR]",
		Short: "issue a user's client certificate and write their config file",
		Long:  userCreateLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUserCreate(contextOf(cmd), s, args[0], f)
		},
	}
	cmd.Flags().StringVar(&f.role, "role", "", "viewer (read-only), editor or admin (required)")
	cmd.Flags().StringSliceVar(&f.namespaces, "namespace", nil, "bind the role to this namespace (repeatable, or a comma list); none: fleet-wide")
	cmd.Flags().StringVarP(&f.out, "output", "o", "", "the config file to write (required)")
	cmd.Flags().StringVar(&f.pem, "pem", "", "also write DIR/ca.pem, DIR/cert.pem and DIR/key.pem, for other gRPC clients")
	cmd.Flags().DurationVar(&f.ttl, "ttl", 0, "how long the certificate is valid (default: the hub's, a year)")
	return cmd
}

func runUserCreate(ctx context.Context, s IO, name string, f userCreateFlags) error {
	role, err := roleFlag(f.role)
	if err != nil {
		return err
	}
	if f.out == "" && f.pem == "" {
		return errors.New("-o FILE (or --pem DIR): required: where to write the user's credentials")
	}
	if err := checkFree(f); err != nil {
		return err
	}
	csrPEM, keyPEM, err := certs.NewCSR(name)
	if err != nil {
		return err
	}
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	req := &hubv1.CreateUserRequest{Name: name, Role: role, CsrPem: csrPEM, Namespaces: f.namespaces}
	if f.ttl > 0 {
		req.Ttl = durationpb.New(f.ttl)
	}
	resp, err := c.CreateUser(ctx, req)
	if err != nil {
		return err
	}
	user := &clientconfig.Config{
		Server: c.Config().Address, User: name, CertificateAuthority: string(resp.GetCaBundlePem()),
		ClientCertificate: string(resp.GetCertificatePem()), ClientKey: string(keyPEM),
	}
	var written []string
	if f.out != "" {
		if err := user.Write(f.out); err != nil {
			return fmt.Errorf("write %s: %w", f.out, err)
		}
		written = append(written, f.out)
	}
	if f.pem != "" {
		if err := writePEMs(f.pem, user); err != nil {
			return err
		}
		written = append(written, pemPaths(f.pem)...)
	}
	fmt.Fprintf(s.Out, "user/%s (%s) written to %s; certificate valid until %s\n",
		name, roleText(f.role, f.namespaces), strings.Join(written, ", "), resp.GetNotAfter().AsTime().UTC().Format(time.RFC3339))
	return nil
}

// PEM file names of --pem DIR: the hub CA, the certificate and its key.
const (
	pemCAFile   = "ca.pem"
	pemCertFile = "cert.pem"
	pemKeyFile  = "key.pem"
)

// pemPaths are the files --pem dir writes, in the order of pemFiles.
func pemPaths(dir string) []string {
	return []string{filepath.Join(dir, pemCAFile), filepath.Join(dir, pemCertFile), filepath.Join(dir, pemKeyFile)}
}

// checkFree refuses before anything is issued when a file user create
// would write exists already: it never overwrites credentials.
func checkFree(f userCreateFlags) error {
	if f.out != "" {
		if _, err := os.Stat(f.out); err == nil {
			return fmt.Errorf("-o %s: the file exists; remove it or choose another", f.out)
		}
	}
	if f.pem == "" {
		return nil
	}
	for _, p := range pemPaths(f.pem) {
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("--pem %s: %s exists; remove it or choose another directory", f.pem, p)
		}
	}
	return nil
}

// writePEMs writes the user's CA, certificate and key into dir (made 0700
// when missing); the key 0600, the certificates 0644. A file that appeared
// meanwhile is not overwritten (O_EXCL).
func writePEMs(dir string, user *clientconfig.Config) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("--pem %s: %w", dir, err)
	}
	paths := pemPaths(dir)
	files := []struct {
		path, data string
		mode       os.FileMode
	}{
		{paths[0], user.CertificateAuthority, 0o644},
		{paths[1], user.ClientCertificate, 0o644},
		{paths[2], user.ClientKey, 0o600},
	}
	for _, f := range files {
		if err := writeNew(f.path, []byte(f.data), f.mode); err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	return nil
}

// writeNew creates path with data and mode, failing if it exists.
func writeNew(path string, data []byte, mode os.FileMode) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := fh.Write(data); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

func newUserRevoke(s IO) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke NAME",
		Short: "revoke every certificate of a user issued until now, on every replica",
		Long:  userRevokeLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUserRevoke(contextOf(cmd), s, args[0])
		},
	}
}

func runUserRevoke(ctx context.Context, s IO, name string) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	revoked, err := c.RevokeUser(ctx, name)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.Out, "user/%s revoked: its certificates issued until %s are refused\n",
		name, revoked.GetRevokeTime().AsTime().UTC().Format(time.RFC3339))
	return err
}

func newUserRevoked(s IO) *cobra.Command {
	return &cobra.Command{
		Use:   "revoked",
		Short: "list the revoked users",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUserRevoked(contextOf(cmd), s)
		},
	}
}

func runUserRevoked(ctx context.Context, s IO) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	revoked, err := c.ListRevokedUsers(ctx)
	if err != nil {
		return err
	}
	if len(revoked) == 0 {
		_, err := fmt.Fprintln(s.Err, "No users revoked.")
		return err
	}
	t := newTable(s.Out, "NAME", "REVOKED", "BY")
	for _, r := range revoked {
		t.row(r.GetName(), r.GetRevokeTime().AsTime().UTC().Format(time.RFC3339), orNone(r.GetRevokedBy()))
	}
	return t.flush()
}
