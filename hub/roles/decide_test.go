package roles

import (
	"errors"
	"strings"
	"testing"
)

// TestDecide is the authorization table: each role, fleet-wide or bound to
// team-a, against reads and writes of namespaced objects in team-a and
// team-b, cluster-scoped kinds, cluster records, and the "some namespace"
// check calls make first. A refusal names the namespace or kind.
func TestDecide(t *testing.T) {
	admin, editor, viewer := Grant{Role: Admin}, Grant{Role: Editor}, Grant{Role: Viewer}
	adminA := Grant{Role: Admin, Namespaces: []string{"team-a"}}
	editorA := Grant{Role: Editor, Namespaces: []string{"team-a", "team-c"}}
	viewerA := Grant{Role: Viewer, Namespaces: []string{"team-a"}}
	deployA := Target{Kind: "Deployment", Namespace: "team-a"}
	deployB := Target{Kind: "Deployment", Namespace: "team-b"}
	ppB := Target{Kind: "PropagationPolicy", Namespace: "team-b"}
	cpp := Target{Kind: "ClusterPropagationPolicy"}
	crd := Target{Kind: "CustomResourceDefinition"}
	cluster := Target{Kind: KindCluster}
	token := Target{Kind: KindToken}
	anyNS := Target{Kind: "Deployment", Namespace: AnyNamespace}
	frqA := Target{Kind: "FederatedResourceQuota", Namespace: "team-a"}
	tests := []struct {
		name   string
		g      Grant
		v      Verb
		t      Target
		denied string // "" to allow; else a part of the refusal
	}{
		{"no role reads", Grant{}, Read, deployA, "has no role"},
		{"no role, some namespace", Grant{}, Read, anyNS, "has no role"},
		{"admin writes team-b", admin, Write, deployB, ""},
		{"admin writes cpp", admin, Write, cpp, ""},
		{"admin writes tokens", admin, Write, token, ""},
		{"fleet editor writes team-b", editor, Write, deployB, ""},
		{"fleet editor writes cpp", editor, Write, cpp, `writing ClusterPropagationPolicy (cluster-scoped) needs a fleet-wide admin`},
		{"fleet editor reads cpp", editor, Read, cpp, ""},
		{"namespace admin raises its quota", adminA, Write, frqA, `writing FederatedResourceQuota (it bounds namespace "team-a") needs a fleet-wide admin`},
		{"fleet editor writes a quota", editor, Write, frqA, "needs a fleet-wide admin"},
		{"namespace editor reads its quota", editorA, Read, frqA, ""},
		{"fleet admin writes a quota", admin, Write, frqA, ""},
		{"fleet editor cordons", editor, Write, cluster, "writing Cluster"},
		{"fleet viewer reads team-b", viewer, Read, deployB, ""},
		{"fleet viewer reads crd", viewer, Read, crd, ""},
		{"fleet viewer writes team-a", viewer, Write, deployA, "(the read-only role); writing Deployment needs an editor or admin"},
		{"fleet viewer writes tokens", viewer, Write, token, "writing BootstrapToken needs a fleet-wide admin"},
		{"fleet viewer, some namespace write", viewer, Write, anyNS, "needs an editor or admin"},
		{"editor of a writes a", editorA, Write, deployA, ""},
		{"editor of a reads a", editorA, Read, deployA, ""},
		{"editor of a writes b", editorA, Write, deployB, `may not write Deployment in namespace "team-b"`},
		{"editor of a writes pp in b", editorA, Write, ppB, `namespace "team-b"`},
		{"editor of a reads b", editorA, Read, deployB, `may not read Deployment in namespace "team-b"`},
		{"editor of a writes cpp", editorA, Write, cpp, "ClusterPropagationPolicy (cluster-scoped) needs a fleet-wide admin"},
		{"editor of a reads cpp", editorA, Read, cpp, "reading ClusterPropagationPolicy (cluster-scoped) needs a fleet-wide role"},
		{"editor of a writes crd", editorA, Write, crd, "CustomResourceDefinition"},
		{"editor of a reads clusters", editorA, Read, cluster, ""},
		{"editor of a labels a cluster", editorA, Write, cluster, "writing Cluster (cluster-scoped)"},
		{"editor of a makes a token", editorA, Write, token, "BootstrapToken"},
		{"editor of a, some namespace write", editorA, Write, anyNS, ""},
		{"admin of a writes a", adminA, Write, deployA, ""},
		{"admin of a writes b", adminA, Write, deployB, `namespace "team-b"`},
		{"admin of a writes cpp", adminA, Write, cpp, "needs a fleet-wide admin"},
		{"admin of a manages users", adminA, Write, Target{Kind: KindUser}, "writing User"},
		{"viewer of a reads a", viewerA, Read, deployA, ""},
		{"viewer of a reads b", viewerA, Read, deployB, `namespace "team-b"`},
		{"viewer of a writes a", viewerA, Write, deployA, "needs an editor or admin"},
		{"viewer of a, some namespace read", viewerA, Read, anyNS, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Decide("alice", tt.g, tt.v, tt.t)
			if got := Allows(tt.g, tt.v, tt.t); got != (err == nil) {
				t.Errorf("Allows(%s, %s, %+v) = %t; Decide says %v", tt.g, tt.v, tt.t, got, err)
			}
			switch {
			case tt.denied == "" && err != nil:
				t.Errorf("Decide(%s, %s, %+v) = %v; want allowed", tt.g, tt.v, tt.t, err)
			case tt.denied != "" && (!errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), tt.denied)):
				t.Errorf("Decide(%s, %s, %+v) = %v; want ErrDenied containing %q", tt.g, tt.v, tt.t, err, tt.denied)
			}
		})
	}
}

// TestValidate: a grant an admin sets names a known role and valid,
// distinct namespaces, at most MaxNamespaces of them.
func TestValidate(t *testing.T) {
	many := make([]string, MaxNamespaces+1)
	for i := range many {
		many[i] = "ns-" + strings.Repeat("a", i%50) + string(rune('a'+i%26))
	}
	tests := []struct {
		name string
		g    Grant
		bad  string
	}{
		{"fleet editor", Grant{Role: Editor}, ""},
		{"bound viewer", Grant{Role: Viewer, Namespaces: []string{"team-a", "team-b"}}, ""},
		{"no role", Grant{}, `role ""`},
		{"unknown role", Grant{Role: "owner"}, `role "owner"`},
		{"bad namespace", Grant{Role: Editor, Namespaces: []string{"Team_A"}}, `namespace "Team_A"`},
		{"twice", Grant{Role: Editor, Namespaces: []string{"a", "a"}}, "named twice"},
		{"too many", Grant{Role: Editor, Namespaces: many}, "at most 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.g.Validate()
			if (tt.bad == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.bad)) {
				t.Errorf("Validate(%+v) = %v; want %q", tt.g, err, tt.bad)
			}
		})
	}
}

// BenchmarkDecide is the cost of the decision each event of a Watch or
// List of every namespace pays: a grant bound to 16 namespaces, a target
// in the last.
func BenchmarkDecide(b *testing.B) {
	g := Grant{Role: Editor}
	for i := range 16 {
		g.Namespaces = append(g.Namespaces, "team-"+string(rune('a'+i)))
	}
	target := Target{Kind: "Deployment", Namespace: "team-p"}
	for b.Loop() {
		if err := Decide("alice", g, Read, target); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecideRefused is the same for an object of another namespace,
// which a List or Watch of every namespace leaves out (Allows).
func BenchmarkDecideRefused(b *testing.B) {
	g := Grant{Role: Editor, Namespaces: []string{"team-a"}}
	target := Target{Kind: "Deployment", Namespace: "team-b"}
	for b.Loop() {
		if Allows(g, Read, target) {
			b.Fatal("allowed")
		}
	}
}
