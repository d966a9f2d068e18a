package kit

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tetherproj/tether/test/proc"
)

// WaitForDeployment waits until the Deployment has rolled out: the controller
// has seen its latest generation and all of its spec.replicas are updated and
// available. ctx bounds the wait; the error then says what was still missing.
func (c *Cluster) WaitForDeployment(ctx context.Context, namespace, name string) error {
	deployments := c.Clientset().AppsV1().Deployments(namespace)
	err := proc.Poll(ctx, pollAPI, func(ctx context.Context) error {
		d, err := deployments.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return deploymentRolledOut(d)
	})
	if err != nil {
		return fmt.Errorf("cluster %s: deployment %s/%s: %w", c.Name, namespace, name, err)
	}
	return nil
}

func deploymentRolledOut(d *appsv1.Deployment) error {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	if s.ObservedGeneration < d.Generation {
		return fmt.Errorf("generation %d not yet observed (at %d)", d.Generation, s.ObservedGeneration)
	}
	if s.UpdatedReplicas != want || s.AvailableReplicas != want || s.Replicas != want {
		return fmt.Errorf("replicas %d, updated %d, available %d; want %d", s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, want)
	}
	return nil
}
