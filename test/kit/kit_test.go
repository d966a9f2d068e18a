package kit_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tetherproj/tether/test/kit"
)

// waitTimeout bounds each wait for a condition in a cluster. Everything the
// tests wait for takes well under a second on an idle machine.
const waitTimeout = 60 * time.Second

// poolLabel selects the node that the test Deployments must land on.
const poolLabel = "tether.io/pool"

func threeClusters() []kit.ClusterSpec {
	var specs []kit.ClusterSpec
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("edge-%d", i)
		specs = append(specs, kit.ClusterSpec{
			Name:   name,
			Labels: map[string]string{"region": "eu", "tier": "edge"},
			Nodes: []kit.NodeSpec{
				{Name: "n1", CPU: "8", Memory: "16Gi", Pods: "110", Labels: map[string]string{poolLabel: "system"}},
				{Name: "n2", CPU: "32", Memory: "64Gi", Pods: "110", Labels: map[string]string{poolLabel: "web"}},
			},
		})
	}
	return specs
}

// TestEnv starts three clusters, runs a Deployment of three replicas in each,
// and checks that Stop leaves no process behind.
func TestEnv(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), kit.StartTimeout)
	defer cancel()
	begin := time.Now()
	env, err := kit.Start(ctx, kit.Options{Clusters: threeClusters(), Dir: dir, Logger: kit.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop) // if a check below fails first; Stop is idempotent
	t.Logf("start-up time for %d clusters: %s", len(env.Clusters), time.Since(begin).Round(time.Millisecond))

	t.Run("kubeconfig", func(t *testing.T) { testKubeconfig(t, env) })
	t.Run("nodes", func(t *testing.T) { testNodes(t, env) })
	t.Run("deployments", func(t *testing.T) {
		for _, c := range env.Clusters {
			t.Run(c.Name, func(t *testing.T) {
				t.Parallel()
				testDeployment(t, c)
			})
		}
	})
	t.Run("job", func(t *testing.T) { testJob(t, env.Clusters[0]) })
	logMemory(t, env)
	t.Run("api server restart", func(t *testing.T) { testAPIServerRestart(t, env.Clusters[2]) })

	pids := env.PIDs()
	begin = time.Now()
	env.Stop()
	t.Logf("stopped %d processes in %s", len(pids), time.Since(begin).Round(time.Millisecond))
	t.Run("no process survives Stop", func(t *testing.T) {
		if s := survivors(pids, dir); len(s) > 0 {
			t.Errorf("after Stop, still running:\n%s", strings.Join(s, "\n"))
		}
	})
	env.Stop() // a second Stop does nothing
}

func testKubeconfig(t *testing.T, env *kit.Env) {
	c := env.Clusters[0]
	cfg, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigPath)
	if err != nil {
		t.Fatalf("load %s: %v", c.KubeconfigPath, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version through %s: %v", c.KubeconfigPath, err)
	}
	t.Logf("%s runs Kubernetes %s", c.Name, v.GitVersion)
	if got := env.Cluster("edge-2"); got != env.Clusters[1] {
		t.Errorf("Cluster(edge-2) = %v; want the second cluster", got)
	}
	if diff := cmp.Diff(map[string]string{"region": "eu", "tier": "edge"}, c.Labels); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}
}

func testNodes(t *testing.T, env *kit.Env) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for _, c := range env.Clusters {
		node, err := c.Clientset().CoreV1().Nodes().Get(ctx, "n2", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: get node n2: %v", c.Name, err)
		}
		if got := node.Labels[poolLabel]; got != "web" {
			t.Errorf("%s: node n2 label %s = %q; want web", c.Name, poolLabel, got)
		}
		for name, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: "32", corev1.ResourceMemory: "64Gi", corev1.ResourcePods: "110"} {
			got := node.Status.Allocatable[name]
			if got.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%s: node n2 allocatable %s = %s; want %s", c.Name, name, got.String(), want)
			}
		}
	}
}

// testDeployment runs three replicas pinned to node n2, waits until all are
// available, then scales to one and waits until the other pods are gone.
func testDeployment(t *testing.T, c *kit.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cs := c.Clientset()
	d := webDeployment(3)
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	begin := time.Now()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.AvailableReplicas == 3, nil
	})
	if err != nil {
		t.Fatalf("deployment web never had 3 available replicas: %v", err)
	}
	t.Logf("3 replicas available after %s", time.Since(begin).Round(time.Millisecond))

	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "n2" || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			t.Errorf("pod %s: node %q, phase %s, IP %q; want n2, Running, an IP", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.PodIP)
		}
	}

	scale, err := cs.AppsV1().Deployments("default").GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 1
	if _, err := cs.AppsV1().Deployments("default").UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("scale to 1: %v", err)
	}
	if err := c.WaitForDeployment(ctx, "default", "web"); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 1, nil
	})
	if err != nil {
		t.Fatalf("pods of the scaled-down deployment never went: %v", err)
	}
}

func webDeployment(replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{poolLabel: "web"},
					Containers: []corev1.Container{{
						Name:  "web",
						Image: "nginx:1.27",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("500m"),
							corev1.ResourceMemory: resource.MustParse("256Mi"),
						}},
					}},
				},
			},
		},
	}
}

// testJob checks that kwok completes the pods of a Job, in a namespace
// created after start-up (so its ServiceAccount is made on the fly).
func testJob(t *testing.T, c *kit.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cs := c.Clientset()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "batch"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "once"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "once", Image: "busybox"}},
		}}},
	}
	if _, err := cs.BatchV1().Jobs("batch").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		j, err := cs.BatchV1().Jobs("batch").Get(ctx, "once", metav1.GetOptions{})
		return err == nil && j.Status.Succeeded == 1 && j.Status.CompletionTime != nil, nil
	})
	if err != nil {
		t.Fatalf("job batch/once never completed: %v", err)
	}
}

// testAPIServerRestart stops a cluster's API server and starts it again:
// objects survive and the same kubeconfig works.
func testAPIServerRestart(t *testing.T, c *kit.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cs := c.Clientset()
	c.StopAPIServer()
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
		t.Fatal("API server still answers after StopAPIServer")
	}
	begin := time.Now()
	if err := c.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("API server back after %s", time.Since(begin).Round(time.Millisecond))
	if err := c.WaitForDeployment(ctx, "default", "web"); err != nil {
		t.Fatal(err)
	}
}

// logMemory logs the memory of the Env's running processes, per component.
func logMemory(t *testing.T, env *kit.Env) {
	type usage struct{ rss, pss []int }
	byComponent := map[string]*usage{}
	totalRSS, totalPSS := 0, 0
	for _, p := range env.Processes() {
		rss, pss := memoryKB(p.PID)
		if rss == 0 {
			continue // exited
		}
		u := byComponent[p.Component]
		if u == nil {
			u = &usage{}
			byComponent[p.Component] = u
		}
		u.rss = append(u.rss, rss/1024)
		u.pss = append(u.pss, pss/1024)
		totalRSS += rss
		totalPSS += pss
	}
	names := make([]string, 0, len(byComponent))
	for name := range byComponent {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "\n  %-24s RSS %v, PSS %v", name, byComponent[name].rss, byComponent[name].pss)
	}
	n := len(env.Clusters)
	t.Logf("memory (MiB): RSS %d, PSS %d in all; PSS %d per cluster, etcd shared:%s",
		totalRSS/1024, totalPSS/1024, totalPSS/1024/n, b.String())
}
