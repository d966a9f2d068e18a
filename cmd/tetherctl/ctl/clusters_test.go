package ctl_test

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestClustersCordonTaint(t *testing.T) {
	h := startOnlineHub(t)
	h.putClusters(t)
	table := func() map[string]string { // cluster → its row, spaces collapsed
		rows := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(mustRun(t, h.viewer, "clusters", "-o", "wide")), "\n")[1:] {
			l = spaces.ReplaceAllString(l, " ")
			rows[strings.Fields(l)[0]] = l
		}
		return rows
	}
	rows := table()
	if got := rows["m1"]; !strings.HasPrefix(got, "m1 Ready ") || !strings.Contains(got, " 8 16Gi 110 v0.3.0 env=prod <none>") {
		t.Errorf("clusters m1 row = %q; want Ready, a lease age, 8 16Gi 110 v0.3.0, labels, no taints", got)
	}
	if got := rows["m3"]; got != "m3 Unknown - - - - - env=prod dedicated=gpu:NoSchedule" {
		t.Errorf("clusters m3 row = %q", got)
	}

	steps := []struct {
		args       []string
		out        string
		m1, m3Tail string
	}{
		{[]string{"cordon", "m1"}, "cluster/m1 cordoned\n", "m1 Ready,SchedulingDisabled", ""},
		{[]string{"cordon", "m1"}, "cluster/m1 cordoned\n", "m1 Ready,SchedulingDisabled", ""},
		{[]string{"uncordon", "m1"}, "cluster/m1 uncordoned\n", "m1 Ready ", ""},
		{[]string{"taint", "m3", "dedicated-", "drain=now:NoExecute"}, "cluster/m3 tainted: drain=now:NoExecute\n", "", "env=prod drain=now:NoExecute"},
		{[]string{"taint", "m3", "drain:NoExecute-", "quiet:PreferNoSchedule"}, "cluster/m3 tainted: quiet:PreferNoSchedule\n", "", "env=prod quiet:PreferNoSchedule"},
	}
	for _, st := range steps {
		if out := mustRun(t, h.admin, st.args...); out != st.out {
			t.Errorf("tetherctl %v = %q; want %q", st.args, out, st.out)
		}
		rows := table()
		if st.m1 != "" && !strings.HasPrefix(rows["m1"], st.m1) {
			t.Errorf("after %v, clusters m1 = %q; want it to start with %q", st.args, rows["m1"], st.m1)
		}
		if st.m3Tail != "" && !strings.HasSuffix(rows["m3"], st.m3Tail) {
			t.Errorf("after %v, clusters m3 = %q; want it to end with %q", st.args, rows["m3"], st.m3Tail)
		}
	}

	var one struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, h.viewer, "clusters", "m1", "-o", "json")), &one); err != nil || one.Name != "m1" || one.Labels["env"] != "prod" {
		t.Errorf("clusters m1 -o json = %+v, %v", one, err)
	}
	if out := mustRun(t, h.viewer, "clusters", "-l", "env=dev"); !strings.Contains(out, "m2") || strings.Contains(out, "m1") {
		t.Errorf("clusters -l env=dev =\n%s\nwant m2 only", out)
	}

	for _, tc := range []struct {
		conf string
		args []string
		want string
	}{
		{h.viewer, []string{"cordon", "m1"}, `permission denied for user "victor"`},
		{h.admin, []string{"cordon", "nope"}, "not found: "},
		{h.admin, []string{"clusters", "nope"}, "cluster nope is not registered"},
		{h.admin, []string{"taint", "m1", "k=v"}, "an added taint needs an effect"},
		{h.admin, []string{"taint", "m1", "k=v:Sometimes"}, `effect "Sometimes"`},
		{h.admin, []string{"taint", "m1", "bad key:NoSchedule"}, "invalid request: "},
		{h.admin, []string{"taint", "m1"}, "requires at least 2 arg(s)"},
		{h.admin, []string{"uncordon"}, "accepts 1 arg(s)"},
		{h.admin, []string{"clusters", "-o", "xml"}, `unknown output format "xml"`},
	} {
		code, _, errOut := runWith(t, tc.conf, "", tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("tetherctl %v = %d, stderr %q; want 1 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
