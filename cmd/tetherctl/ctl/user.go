package ctl

import (
	"context"
	"errors"
	"fmt"
	"os"
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
(get, list, watch, placements, simulate); admin may do everything.

The file is written with mode 0600 and never overwrites an existing one.
tetherctl user revoke NAME ends the user's access before the certificate
expires.`

const userRevokeLong = `Revokes every certificate issued to user NAME until now, on every hub
replica: their calls are refused (Unauthenticated, naming the revocation)
and their open watches end. The revocation is stored in the hub's etcd, so
it survives restarts and holds through any replica. A certificate issued
to NAME afterwards (tetherctl user create NAME) is accepted; one issued in
the same second as the revocation is refused too. You cannot revoke the
user you are connected as.`

// userRoles maps --role to the API's roles.
var userRoles = map[string]hubv1.Role{"viewer": hubv1.Role_ROLE_READ_ONLY, "admin": hubv1.Role_ROLE_ADMIN}

func newUser(s IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "issue and revoke credentials for users",
	}
	cmd.AddCommand(newUserCreate(s), newUserRevoke(s), newUserRevoked(s))
	return cmd
}

// userCreateFlags are the options of user create.
type userCreateFlags struct {
	role, out string
	ttl       time.Duration
}

func newUserCreate(s IO) *cobra.Command {
	var f userCreateFlags
	cmd := &cobra.Command{
		Use:   "create NAME --role viewer|admin -o FILE",
		Short: "issue a user's client certificate and write their config file",
		Long:  userCreateLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUserCreate(contextOf(cmd), s, args[0], f)
		},
	}
	cmd.Flags().StringVar(&f.role, "role", "", "viewer (read-only) or admin (required)")
	cmd.Flags().StringVarP(&f.out, "output", "o", "", "the config file to write (required)")
	cmd.Flags().DurationVar(&f.ttl, "ttl", 0, "how long the certificate is valid (default: the hub's, a year)")
	return cmd
}

func runUserCreate(ctx context.Context, s IO, name string, f userCreateFlags) error {
	role, ok := userRoles[f.role]
	if !ok {
		return fmt.Errorf("--role %q: want viewer or admin", f.role)
	}
	if f.out == "" {
		return errors.New("-o FILE: required: where to write the user's config")
	}
	if _, err := os.Stat(f.out); err == nil {
		return fmt.Errorf("-o %s: the file exists; remove it or choose another", f.out)
	}
	csrPEM, keyPEM, err := certs.NewCSR(name)
	if err != nil {
		return err
	}
	conn, cfg, err := dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	req := &hubv1.CreateUserRequest{Name: name, Role: role, CsrPem: csrPEM}
	if f.ttl > 0 {
		req.Ttl = durationpb.New(f.ttl)
	}
	resp, err := hubv1.NewUserServiceClient(conn).CreateUser(ctx, req)
	if err != nil {
		return explain(cfg, err)
	}
	user := &clientconfig.Config{
		Server: cfg.Address, User: name, CertificateAuthority: string(resp.GetCaBundlePem()),
		ClientCertificate: string(resp.GetCertificatePem()), ClientKey: string(keyPEM),
	}
	if err := user.Write(f.out); err != nil {
		return fmt.Errorf("write %s: %w", f.out, err)
	}
	fmt.Fprintf(s.Out, "user/%s (%s) written to %s; certificate valid until %s\n",
		name, f.role, f.out, resp.GetNotAfter().AsTime().UTC().Format(time.RFC3339))
	return nil
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
	conn, cfg, err := dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := hubv1.NewUserServiceClient(conn).RevokeUser(ctx, &hubv1.RevokeUserRequest{Name: name})
	if err != nil {
		return explain(cfg, err)
	}
	_, err = fmt.Fprintf(s.Out, "user/%s revoked: its certificates issued until %s are refused\n",
		name, resp.GetRevoked().GetRevokeTime().AsTime().UTC().Format(time.RFC3339))
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
	conn, cfg, err := dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := hubv1.NewUserServiceClient(conn).ListRevokedUsers(ctx, &hubv1.ListRevokedUsersRequest{})
	if err != nil {
		return explain(cfg, err)
	}
	if len(resp.GetRevoked()) == 0 {
		_, err := fmt.Fprintln(s.Err, "No users revoked.")
		return err
	}
	t := newTable(s.Out, "NAME", "REVOKED", "BY")
	for _, r := range resp.GetRevoked() {
		t.row(r.GetName(), r.GetRevokeTime().AsTime().UTC().Format(time.RFC3339), orNone(r.GetRevokedBy()))
	}
	return t.flush()
}
