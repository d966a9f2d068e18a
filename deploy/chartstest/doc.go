// Package chartstest holds only tests: the Helm charts of deploy/charts
// rendered with the pinned helm (`helm template`, $TETHER_HELM, else
// <repo>/.cache/tools/helm from `make tools-charts`) and applied to a kit
// member cluster. Every main value set is applied with server-side dry-run;
// the agent chart is installed for real and a tether-agent process then runs
// with exactly the ServiceAccount token and RBAC the chart created, applying
// a workload the hub places, so the chart's RBAC is shown sufficient, and
// checked not to grant what it does not document.
package chartstest
