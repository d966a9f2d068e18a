package kit_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tetherproj/tether/test/kit"
)

func TestStartRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		specs   []kit.ClusterSpec
		wantErr string
	}{
		{"bad cluster name", []kit.ClusterSpec{{Name: "Edge_1"}}, `cluster name "Edge_1"`},
		{"duplicate cluster", []kit.ClusterSpec{{Name: "a"}, {Name: "a"}}, `cluster name "a" used twice`},
		{"duplicate node", []kit.ClusterSpec{{Name: "a", Nodes: []kit.NodeSpec{{Name: "n"}, {Name: "n"}}}}, `node name "n" used twice`},
		{"bad quantity", []kit.ClusterSpec{{Name: "a", Nodes: []kit.NodeSpec{{Name: "n", CPU: "lots"}}}}, `cpu "lots"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := kit.Start(context.Background(), kit.Options{Clusters: tc.specs, Dir: t.TempDir()})
			if err == nil {
				env.Stop()
				t.Fatalf("Start(%v) succeeded; want an error containing %q", tc.specs, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Start(%v) = %v; want an error containing %q", tc.specs, err, tc.wantErr)
			}
		})
	}
}

func TestStartWithoutBinaries(t *testing.T) {
	empty := t.TempDir()
	_, err := kit.Start(context.Background(), kit.Options{BinDir: empty, Dir: t.TempDir()})
	if !errors.Is(err, kit.ErrMissingBinaries) {
		t.Fatalf("Start with BinDir %s = %v; want ErrMissingBinaries", empty, err)
	}
	for _, want := range []string{"make kit-bins", "kube-apiserver", "kwok", empty} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start error %q does not mention %q", err, want)
		}
	}
}

// TestStartErrorQuotesLog makes the API server fail and checks that the error
// quotes its log, and that the processes already started (etcd) are gone.
func TestStartErrorQuotesLog(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), kit.StartTimeout)
	defer cancel()
	_, err := kit.Start(ctx, kit.Options{
		Dir:       dir,
		ExtraArgs: map[string][]string{"kube-apiserver": {"--no-such-flag"}},
	})
	if err == nil {
		t.Fatal("Start with a bad API server flag succeeded; want an error")
	}
	for _, want := range []string{"member-1/kube-apiserver", "exited", "last lines of", "unknown flag: --no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start error does not mention %q:\n%v", want, err)
		}
	}
	if s := survivors(nil, dir); len(s) > 0 {
		t.Errorf("after a failed Start, still running:\n%s", strings.Join(s, "\n"))
	}
}
