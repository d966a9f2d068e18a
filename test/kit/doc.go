// Package kit starts real Kubernetes member clusters for tests: per cluster a
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok, sharing one
// etcd, all on 127.0.0.1, with fake kwok nodes that carry capacity and labels so
// that Deployments really become Available.
//
// Use it from a test:
//
//	env := kit.StartT(t, kit.Options{Clusters: kit.Members(3)})
//	cs := env.Clusters[0].Clientset()
//	// create objects through client-go, then
//	err := env.Clusters[0].WaitForDeployment(ctx, "default", "web")
//
// StartT stops everything when the test ends (and fails the test if the start
// fails); Start and Env.Stop do the same by hand. Beyond the admin clients
// (RESTConfig, Clientset, Dynamic, KubeconfigPath), a Cluster can grow
// (AddNodes), crash and restart its API server (StopAPIServer, StartAPIServer)
// for fault tests, and wait for a rollout (WaitForDeployment). Options.ExtraArgs
// passes extra flags to any of the binaries.
//
// # Cost
//
// On two cores, three clusters with their nodes are ready about 4.5 s after
// Start (the three API servers' start-up is most of it), and a Deployment is
// Available some 0.2 s after it is created. Each cluster takes about 350 MiB
// (proportional set size; the API server alone about 210 MiB), plus some
// 60 MiB for the shared etcd. Stop takes about a second.
//
// # Binaries
//
// The kit runs etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// kwok from the directory named by $TETHER_KIT_BIN, or else from test/.cache/bin
// in the repository that contains the working directory. `make kit-bins` builds
// them there: one multi-call binary, kitbin (the test/kitbin module), and a
// symlink to it per name. A missing binary is an error that says so, never a
// skipped test.
//
// # What runs
//
// One etcd per Env serves every cluster of that Env, each under its own
// --etcd-prefix, with fsync off (test data only). Each cluster's API server
// listens on a free port of 127.0.0.1 with a self-signed serving certificate
// generated in Go, authenticates with a static token file (the admin token,
// group system:masters, is the only user), and authorizes with RBAC, so tests
// can also check what a restricted identity may do. The controller manager runs
// the workload, namespace, garbage-collection, service-account and
// node-lifecycle controllers (the latter removes the not-ready taint once kwok
// marks a node Ready); cloud, volume-attachment, certificate-signing, DRA and
// autoscaling controllers are off. The ServiceAccount admission plugin stays on,
// as in a real cluster: Start waits until the `default` ServiceAccount of the
// `default` namespace exists, and in namespaces created later the
// ReplicaSet controller retries until the service-account controller (a few
// milliseconds) has created theirs.
//
// kwok manages only the nodes annotated kwok.x-k8s.io/node=fake, with the
// stages in stages.yaml: nodes become Ready at once, pods become Running and
// Ready at once, pods owned by a Job complete, and deleted pods disappear.
//
// # Processes
//
// Every child process is started from a goroutine locked to its OS thread,
// with its own process group and a parent-death signal (SIGKILL), so the kernel
// kills it if the test binary dies, however it dies. Stop sends SIGTERM to each
// process group, SIGKILL after a short grace, and waits for every process.
// Env.PIDs lists every process ever started, so a test can check none survive.
// Each process writes its output to <Dir>/<cluster>/<component>.log; start-up
// errors include the tail of the relevant log.
package kit
