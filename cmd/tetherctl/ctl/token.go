package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/durationpb"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

func init() { commands = append(commands, newToken) }

const tokenCreateLong = `Issues a bootstrap token an agent registers with. The token's secret is
shown only now; the hub keeps its hash. --ttl bounds its life (the hub caps
it at a week), --cluster binds it to one cluster name, --uses to a number
of registrations (0: any number until it expires).

-o json prints {"token": ..., "caHash": ..., "expires": ...}: the token,
the hub CA's pin for --ca-hash, and the expiry (RFC 3339). Give them to

  tether-agent --hub ADDR --token TOKEN --ca-hash CAHASH --cluster NAME ...`

// tokenCreated is the JSON of token create -o json; tools rely on its keys.
type tokenCreated struct {
	Token   string `json:"token"`
	CAHash  string `json:"caHash"`
	Expires string `json:"expires"`
}

func newToken(s IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "issue, list and delete the bootstrap tokens agents register with",
	}
	cmd.AddCommand(newTokenCreate(s), newTokenList(s), newTokenDelete(s))
	return cmd
}

// tokenCreateFlags are the options of token create.
type tokenCreateFlags struct {
	ttl                   time.Duration
	cluster, desc, output string
	uses                  int
}

func newTokenCreate(s IO) *cobra.Command {
	var f tokenCreateFlags
	cmd := &cobra.Command{
		Use:   "create [--ttl 1h] [--cluster NAME] [--uses N] [-o json]",
		Short: "issue a bootstrap token",
		Long:  tokenCreateLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTokenCreate(contextOf(cmd), s, f)
		},
	}
	cmd.Flags().DurationVar(&f.ttl, "ttl", 0, "how long the token is valid (default: the hub's, 24h)")
	cmd.Flags().StringVar(&f.cluster, "cluster", "", "the only cluster name the token registers")
	cmd.Flags().IntVar(&f.uses, "uses", 0, "how many registrations the token allows; 0 for any number")
	cmd.Flags().StringVar(&f.desc, "description", "", "a note shown by token list")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "output format: empty for text, or json")
	return cmd
}

func runTokenCreate(ctx context.Context, s IO, f tokenCreateFlags) error {
	if err := checkFormat(f.output, "", formatJSON); err != nil {
		return err
	}
	if f.ttl < 0 || f.uses < 0 {
		return fmt.Errorf("--ttl and --uses must not be negative")
	}
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	req := &hubv1.CreateTokenRequest{ClusterName: f.cluster, Uses: int32(f.uses), Description: f.desc}
	if f.ttl > 0 {
		req.Ttl = durationpb.New(f.ttl)
	}
	resp, err := c.CreateToken(ctx, req)
	if err != nil {
		return err
	}
	expires := resp.GetExpireTime().AsTime().UTC().Format(time.RFC3339)
	if f.output == formatJSON {
		data, err := json.MarshalIndent(tokenCreated{Token: resp.GetToken(), CAHash: resp.GetCaHash(), Expires: expires}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(s.Out, "%s\n", data)
		return err
	}
	name := f.cluster
	if name == "" {
		name = "NAME"
	}
	fmt.Fprintf(s.Out, "token:   %s\ncaHash:  %s\nexpires: %s\n\nRegister an agent with:\n  tether-agent --hub %s --token %s --ca-hash %s --cluster %s --kubeconfig FILE --data-dir DIR\n",
		resp.GetToken(), resp.GetCaHash(), expires, c.Config().Address, resp.GetToken(), resp.GetCaHash(), name)
	return nil
}

func newTokenList(s IO) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list [-o table|json]",
		Short: "list the usable tokens (without their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTokenList(contextOf(cmd), s, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", formatTable, "output format: table or json")
	return cmd
}

// tokenInfo is one token of token list -o json.
type tokenInfo struct {
	ID          string `json:"id"`
	Cluster     string `json:"cluster,omitempty"`
	UsesLeft    int32  `json:"usesLeft"`
	Created     string `json:"created"`
	Expires     string `json:"expires"`
	Description string `json:"description,omitempty"`
}

func runTokenList(ctx context.Context, s IO, output string) error {
	if err := checkFormat(output, formatTable, formatJSON); err != nil {
		return err
	}
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	tokens, err := c.ListTokens(ctx)
	if err != nil {
		return err
	}
	infos := []tokenInfo{}
	for _, t := range tokens {
		infos = append(infos, tokenInfo{ID: t.GetId(), Cluster: t.GetClusterName(), UsesLeft: t.GetUsesLeft(),
			Created: t.GetCreateTime().AsTime().UTC().Format(time.RFC3339), Expires: t.GetExpireTime().AsTime().UTC().Format(time.RFC3339),
			Description: t.GetDescription()})
	}
	if output == formatJSON {
		return writeValue(s.Out, formatJSON, infos)
	}
	if len(infos) == 0 {
		fmt.Fprintln(s.Err, "No usable tokens.")
		return nil
	}
	tw := newTable(s.Out, "ID", "CLUSTER", "USES LEFT", "EXPIRES", "DESCRIPTION")
	for _, t := range infos {
		cluster, uses := t.Cluster, strconv.Itoa(int(t.UsesLeft))
		if cluster == "" {
			cluster = "<any>"
		}
		if t.UsesLeft == 0 {
			uses = "unlimited"
		}
		tw.row(t.ID, cluster, uses, t.Expires, t.Description)
	}
	return tw.flush()
}

func newTokenDelete(s IO) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "revoke a token (by its id, the part before the dot)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := contextOf(cmd)
			c, err := dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.DeleteToken(ctx, args[0]); err != nil {
				return err
			}
			id, _, _ := strings.Cut(args[0], ".") // never echo a secret
			fmt.Fprintf(s.Out, "token/%s deleted\n", id)
			return nil
		},
	}
}
