// Package internal holds code that both the hub and the agent use: the
// resource interpreter, override application, Kubernetes object helpers,
// backoff and logging. It may import api/ and libraries, never hub/ or agent/.
package internal
