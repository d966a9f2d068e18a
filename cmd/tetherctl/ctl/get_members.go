package ctl

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tetherproj/tether/client"
)

// memberFlags are get's flags for reading member clusters through the
// hub's member proxy instead of the hub's own objects.
type memberFlags struct {
	clusters string // "all" or NAME,NAME...; empty: read the hub
	proxy    string // the member proxy's host:port
}

// runGetMembers prints kind as each member cluster's API server lists it,
// one table with a CLUSTER column; a cluster that does not answer has a
// row saying why and when its agent was last heard from.
func runGetMembers(ctx context.Context, s IO, kind string, f getFlags, m memberFlags) error {
	if f.output != formatTable && f.output != formatWide {
		return fmt.Errorf("get --clusters -o %s: not supported; use table or wide", f.output)
	}
	cfg, err := loadConfig(ctx)
	if err != nil {
		return err
	}
	names, seen, err := memberClusters(ctx, m.clusters)
	if err != nil {
		return err
	}
	ns := f.namespace
	if f.allNamespaces {
		ns = ""
	} else if ns == "" {
		ns = "default"
	}
	t, err := cfg.ListMembers(ctx, client.MemberQuery{ProxyAddr: m.proxy, Clusters: names, Resource: kind, Namespace: ns, Selector: f.selector})
	if err != nil {
		return err
	}
	return printMembers(s, t, seen, f.allNamespaces, f.output == formatWide)
}

// memberClusters are the clusters of --clusters ("all": every cluster the
// hub knows), and what the hub last heard from each, for the rows of
// those that do not answer.
func memberClusters(ctx context.Context, flag string) ([]string, map[string]string, error) {
	c, err := dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	list, err := c.ListClusters(ctx, client.ClusterSelector{})
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]string{}
	var all []string
	for _, cl := range list {
		all = append(all, cl.GetName())
		seen[cl.GetName()] = "never heard from"
		if hb := cl.GetLastHeartbeatTime(); hb != nil {
			seen[cl.GetName()] = "last heartbeat " + time.Since(hb.AsTime()).Round(time.Second).String() + " ago"
		}
	}
	if flag == "all" {
		return all, seen, nil
	}
	return strings.Split(flag, ","), seen, nil
}

// printMembers writes the table: CLUSTER, NAMESPACE with -A, then the
// members' columns (all of them with wide, else those kubectl shows).
func printMembers(s IO, t *client.MemberTable, seen map[string]string, allNamespaces, wide bool) error {
	var cols []int
	header := []string{"CLUSTER"}
	if allNamespaces {
		header = append(header, "NAMESPACE")
	}
	for i, c := range t.Columns {
		if wide || c.Priority == 0 {
			cols = append(cols, i)
			header = append(header, strings.ToUpper(c.Name))
		}
	}
	tw := newTable(s.Out, header...)
	for _, m := range t.Clusters {
		if m.Err != nil {
			tw.row(m.Cluster, fmt.Sprintf("<unreachable: %s; %s>", oneLine(m.Err.Error()), seenOf(seen, m.Cluster)))
			continue
		}
		for i, r := range m.Rows {
			tw.row(memberRow(m.Cluster, m.Namespaces[i], r, cols, allNamespaces)...)
		}
	}
	return tw.flush()
}

func memberRow(cluster, ns string, r metav1.TableRow, cols []int, allNamespaces bool) []string {
	cells := []string{cluster}
	if allNamespaces {
		cells = append(cells, ns)
	}
	for _, i := range cols {
		v := "<none>"
		if i < len(r.Cells) && r.Cells[i] != nil {
			v = fmt.Sprint(r.Cells[i])
		}
		cells = append(cells, v)
	}
	return cells
}

func seenOf(seen map[string]string, cluster string) string {
	if s, ok := seen[cluster]; ok {
		return s
	}
	return "not a cluster of this hub"
}

// oneLine keeps a message on one table row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
