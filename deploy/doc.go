// Package deploy holds what runs streambench past one machine: the Kubernetes manifests
// (deploy/k8s, kustomize) and the Grafana dashboard for `load --metrics-addr`
// (deploy/grafana). It has no code; its tests decode every manifest strictly into the
// official Kubernetes types, check the invariants the design rests on, and parse every
// container's args with the real streambench flag sets.
package deploy
