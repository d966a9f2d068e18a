package kube

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/test/kit"
)

// env is the one member cluster the package's tests share.
var env *kit.Env

// ownFrames mark goroutines running this package's code.
var ownFrames = []string{"github.com/tetherproj/tether/agent/kube."}

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), kit.StartTimeout)
	e, err := kit.Start(ctx, kit.Options{Clusters: kit.Members(1)})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env = e
	code := m.Run()
	env.Stop()
	os.Exit(leakcheck.Check(code, leakcheck.Filter{Only: ownFrames, Ignore: []string{"TestMain"}}))
}
