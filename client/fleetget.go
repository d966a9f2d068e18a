package client

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// MemberQuery is a fleet-wide read through the hub's member proxy.
type MemberQuery struct {
	// ProxyAddr is the member proxy's host:port; empty: the host of
	// Config.Address, DefaultProxyPort.
	ProxyAddr string
	// Clusters are the clusters to read.
	Clusters []string
	// Resource is a kind's plural, singular or short name as kubectl takes
	// it (pods, po, deploy, events, nodes, any CRD's), resolved in each
	// member by its own discovery.
	Resource string
	// Namespace limits a namespaced kind to one namespace; empty: all.
	Namespace string
	// Selector is a label selector; empty: everything.
	Selector string
	// Timeout bounds each cluster's read; 0: 20 s.
	Timeout time.Duration
}

// MemberTable is the rows of every cluster, as the members' API servers
// print them (server-side tables, the columns of kubectl get).
type MemberTable struct {
	// Columns are the members' columns (the first answering cluster's).
	Columns []metav1.TableColumnDefinition
	// Clusters has one entry per cluster asked, in name order: its rows,
	// or why it did not answer. A cluster is never left out.
	Clusters []MemberRows
}

// MemberRows is one cluster's part of a MemberTable.
type MemberRows struct {
	Cluster string
	// Rows are the table rows; Namespaces[i] is row i's namespace.
	Rows       []metav1.TableRow
	Namespaces []string
	// Err says why the cluster did not answer (unreachable, refused);
	// nil when it did.
	Err error

	columns []metav1.TableColumnDefinition
}

// tableAccept asks an API server for its server-side table.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// ListMembers reads q.Resource in every cluster of q through the hub's
// member proxy, at most 8 clusters at once, each as the user of c (the
// member's RBAC decides).
func (c Config) ListMembers(ctx context.Context, q MemberQuery) (*MemberTable, error) {
	if q.Timeout == 0 {
		q.Timeout = 20 * time.Second
	}
	out := make([]MemberRows, len(q.Clusters))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, cluster := range q.Clusters {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = c.listMember(ctx, q, cluster)
		})
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	t := &MemberTable{Clusters: out}
	for _, m := range out {
		if m.Err == nil {
			t.Columns = m.columns
			break
		}
	}
	return t, nil
}

// listMember reads one cluster.
func (c Config) listMember(ctx context.Context, q MemberQuery, cluster string) MemberRows {
	ctx, cancel := context.WithTimeout(ctx, q.Timeout)
	defer cancel()
	rows := MemberRows{Cluster: cluster}
	table, err := c.memberTable(ctx, q, cluster)
	if err != nil {
		rows.Err = err
		return rows
	}
	rows.Rows, rows.columns = table.Rows, table.ColumnDefinitions
	for _, r := range table.Rows {
		rows.Namespaces = append(rows.Namespaces, rowNamespace(r))
	}
	return rows
}

// memberTable resolves the resource in the member and gets its table.
func (c Config) memberTable(ctx context.Context, q MemberQuery, cluster string) (*metav1.Table, error) {
	rc, err := c.MemberRESTConfig(q.ProxyAddr, cluster)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), dc, nil)
	gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: strings.ToLower(q.Resource)})
	if err != nil {
		return nil, fmt.Errorf("resource %q: %w", q.Resource, err)
	}
	namespaced := true
	if gvk, err := mapper.KindFor(gvr); err == nil {
		if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			namespaced = m.Scope.Name() == meta.RESTScopeNameNamespace
		}
	}
	path := resourcePath(gvr, q.Namespace, namespaced)
	req := dc.RESTClient().Get().AbsPath(path).SetHeader("Accept", tableAccept).Param("includeObject", "Metadata")
	if q.Selector != "" {
		req = req.Param("labelSelector", q.Selector)
	}
	body, err := req.DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(body, table); err != nil || table.Kind != "Table" {
		return nil, fmt.Errorf("%s: the member answered no table (%v)", path, err)
	}
	return table, nil
}

// MemberRESTConfig is a client-go configuration that reaches cluster's API
// through the hub's member proxy at proxyAddr (see Kubeconfig), as c's user.
func (c Config) MemberRESTConfig(proxyAddr, cluster string) (*rest.Config, error) {
	data, err := c.Kubeconfig(proxyAddr, cluster)
	if err != nil {
		return nil, err
	}
	cc, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, err
	}
	cc.QPS, cc.Burst = 50, 100
	return cc, nil
}

// resourcePath is the list path of gvr in namespace ("" all).
func resourcePath(gvr schema.GroupVersionResource, namespace string, namespaced bool) string {
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	if namespaced && namespace != "" {
		p += "/namespaces/" + namespace
	}
	return p + "/" + gvr.Resource
}

// rowNamespace is the namespace of a row's object metadata, if any.
func rowNamespace(r metav1.TableRow) string {
	var m metav1.PartialObjectMetadata
	if len(r.Object.Raw) == 0 || json.Unmarshal(r.Object.Raw, &m) != nil {
		return ""
	}
	return m.Namespace
}
