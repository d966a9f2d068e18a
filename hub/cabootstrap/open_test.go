package cabootstrap

import (
	"context"
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
)

// TestRacingReplicasAgreeOnOneCA: replicas starting at once on an empty
// store each create a CA to seal and a hash to record; the first write of
// each wins and every replica ends with that one.
func TestRacingReplicasAgreeOnOneCA(t *testing.T) {
	const replicas = 4
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := make([]byte, pki.EncryptionKeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	sealedHashes, recorded := make([]string, replicas), make([]string, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			ca, err := sealedCA(ctx, st, key, "")
			if err != nil {
				errs[i] = err
				return
			}
			sealedHashes[i] = ca.Hash()
			own, _ := pki.NewCA() // each replica's own candidate for the record
			recorded[i], errs[i] = recordCAHash(ctx, st, own.Hash())
		})
	}
	wg.Wait()
	for i := range replicas {
		if errs[i] != nil {
			t.Fatalf("replica %d: %v", i, errs[i])
		}
		if sealedHashes[i] != sealedHashes[0] || recorded[i] != recorded[0] {
			t.Errorf("replica %d: sealed CA %s, recorded %s; want replica 0's %s, %s", i, sealedHashes[i], recorded[i], sealedHashes[0], recorded[0])
		}
	}
}
