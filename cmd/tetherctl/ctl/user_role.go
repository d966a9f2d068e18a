package ctl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

const userSetRoleLong = `Changes what every certificate of user NAME may do, on every hub
replica, connections already open included: a watch stops sending what
the new role may not read, and a watch of a namespace (or a template) the
new role may not read ends (PermissionDenied, naming it). --namespace
(repeatable, or a comma list) binds the role to those namespaces; none:
fleet-wide. You cannot change the role of the user you are connected as.`

// roleNames maps the API's roles back to --role's names.
var roleNames = map[hubv1.Role]string{hubv1.Role_ROLE_READ_ONLY: "viewer", hubv1.Role_ROLE_EDITOR: "editor", hubv1.Role_ROLE_ADMIN: "admin"}

// roleText says a role and its namespaces as people read them.
func roleText(role string, namespaces []string) string {
	if len(namespaces) == 0 {
		return "fleet-wide " + role
	}
	return role + " of " + strings.Join(namespaces, ", ")
}

func newUserSetRole(s IO) *cobra.Command {
	var role string
	var namespaces []string
	cmd := &cobra.Command{
		Use:   "set-role NAME --role viewer|editor|admin [--namespace NS]...",
		Short: "change a user's role, for its open connections too",
		Long:  userSetRoleLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUserSetRole(contextOf(cmd), s, args[0], role, namespaces)
		},
	}
	cmd.Flags().StringVar(&role, "role", "", "viewer (read-only), editor or admin (required)")
	cmd.Flags().StringSliceVar(&namespaces, "namespace", nil, "bind the role to this namespace (repeatable, or a comma list); none: fleet-wide")
	return cmd
}

func runUserSetRole(ctx context.Context, s IO, name, roleName string, namespaces []string) error {
	role, err := roleFlag(roleName)
	if err != nil {
		return err
	}
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	u, err := c.SetUserRole(ctx, name, role, namespaces)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.Out, "user/%s is %s\n", u.GetName(), roleText(roleNames[u.GetRole()], u.GetNamespaces()))
	return err
}

func newUserRoles(s IO) *cobra.Command {
	return &cobra.Command{
		Use:   "roles",
		Short: "list the users' stored roles",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUserRoles(contextOf(cmd), s)
		},
	}
}

func runUserRoles(ctx context.Context, s IO) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	users, err := c.ListUserRoles(ctx)
	if err != nil {
		return err
	}
	if len(users) == 0 {
		_, err := fmt.Fprintln(s.Err, "No roles stored: every user has the role of its certificate.")
		return err
	}
	t := newTable(s.Out, "NAME", "ROLE", "NAMESPACES", "SET", "BY")
	for _, u := range users {
		role, ok := roleNames[u.GetRole()]
		if !ok {
			role = "none (unreadable record)"
		}
		ns := strings.Join(u.GetNamespaces(), ",")
		if ns == "" {
			ns = "*"
		}
		t.row(u.GetName(), role, ns, u.GetSetTime().AsTime().UTC().Format(time.RFC3339), orNone(u.GetSetBy()))
	}
	return t.flush()
}
