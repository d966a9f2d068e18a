package apply_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tetherproj/tether/agent/apply"
)

// fightLength is how long the test's rival controller fights the applier.
const fightLength = 3 * time.Second

// maxRepairs bounds the applier's repairs during the fight. Without a
// backoff it would repair within milliseconds of every rival write, well
// over a hundred times; client-go's default controller backoff (5 ms
// doubling) allows about ten in three seconds.
const maxRepairs = 25

// keepRepairingWithin bounds how long the test waits, past the fight's
// length, for the applier's second repair: on a machine busy with other
// tests the first repairs can take a second each.
const keepRepairingWithin = 30 * time.Second

// TestFightBacksOff: a controller that keeps rewriting an applied field
// meets a growing backoff, not a spin.
func TestFightBacksOff(t *testing.T) {
	a := startApplier(t)
	const ns = "fight"
	namespace(t, ns)
	mustApply(t, a, work(t, "fight/web", "v1", nil, deployment(ns, "web", "nginx:1", 1, nil)), applied)

	ctx, cancel := context.WithTimeout(context.Background(), keepRepairingWithin)
	defer cancel()
	start := time.Now()
	repairs, inFight := 0, 0 // inFight: repairs within fightLength
	for ctx.Err() == nil && (time.Since(start) < fightLength || repairs < 2) {
		d, err := kube().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err == nil && d.Spec.Template.Spec.Containers[0].Image != "rival:1" {
			repairs++
			if time.Since(start) < fightLength {
				inFight++
			}
			editDeployment(t, ns, "web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "rival:1" })
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	if inFight > maxRepairs {
		t.Fatalf("applier repaired %d times in %v; want at most %d (backoff)", inFight, fightLength, maxRepairs)
	}
	if repairs < 2 {
		t.Fatalf("applier repaired %d times in %v; want it to keep repairing", repairs, keepRepairingWithin)
	}
	t.Logf("%d repairs in %v", inFight, fightLength)
}

// TestDriftBeforeTheInformerListed: a change made after Tether applied an
// object but before the drift informer of its kind first listed it (the
// informer starts after the kind's first apply) is drift all the same:
// the informer sees the object first with another generation than
// Tether's write left, and the applier repairs it.
func TestDriftBeforeTheInformerListed(t *testing.T) {
	const ns = "firstlist"
	namespace(t, ns)
	a, err := apply.New(apply.Config{RESTConfig: env.Clusters[0].RESTConfig(), Interpreter: testInterpreter(t)}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	// Applied before Run: no informer lists Deployments until Run starts.
	mustApply(t, a, work(t, "firstlist/web", "v1", nil, deployment(ns, "web", "nginx:1", 1, nil)), applied)
	editDeployment(t, ns, "web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "rival:1" })
	run(t, a)
	eventually(t, "the rival's image repaired", func(ctx context.Context) error {
		d, err := kube().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1" {
			return fmt.Errorf("image %s", img)
		}
		return nil
	})
}
