package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench/measure"
)

const k8sDir = "k8s"

// smallOverlay is the base on a node of 2 cores and a few GiB (deploy/overlays/small): the same
// workloads, smaller, checked here as kubectl builds it.
const smallOverlay = "overlays/small"

// kustomization is the part of kustomization.yaml these manifests use, decoded strictly so a
// field this test does not know (a misspelt one) fails it. `kubectl kustomize` (TestKustomizeBuild)
// checks the rest.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Labels     []struct {
		Pairs map[string]string `json:"pairs"`
	} `json:"labels"`
	Resources          []string `json:"resources"`
	ConfigMapGenerator []struct {
		Name string   `json:"name"`
		Envs []string `json:"envs"`
	} `json:"configMapGenerator"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// object is one decoded manifest document.
type object struct {
	where string // file and document number, for messages
	obj   any    // *appsv1.Deployment, *corev1.Service, ...
}

// decodeStrict decodes one YAML document into into: duplicate keys and fields the type does
// not have are errors (what kubectl's strict field validation rejects).
func decodeStrict(doc []byte, into any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the object")
	}
	return nil
}

// newObject returns the official type for a document's apiVersion and kind.
func newObject(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}, nil
	case "batch/v1 Job":
		return &batchv1.Job{}, nil
	case "v1 Service":
		return &corev1.Service{}, nil
	case "v1 PersistentVolumeClaim":
		return &corev1.PersistentVolumeClaim{}, nil
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, nil
	}
	return nil, fmt.Errorf("apiVersion %q kind %q: not a type this test decodes", tm.APIVersion, tm.Kind)
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decodeAll decodes every document of a multi-document YAML stream.
func decodeAll(name string, data []byte) ([]object, error) {
	var out []object
	for i, doc := range docSeparator.Split(string(data), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		where := fmt.Sprintf("%s document %d", name, i+1)
		obj, err := newObject([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if err := decodeStrict([]byte(doc), obj); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out = append(out, object{where: where, obj: obj})
	}
	return out, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// base is the kustomization and its resources, decoded: the base as written (loadBase) or an
// overlay as kubectl builds it (loadBuilt).
type base struct {
	name      string
	k         kustomization
	objects   []object
	params    map[string]string // the run's parameters: the configMapGenerator's env file
	configMap string            // the name the pods read params by
}

func loadBase(t *testing.T) *base {
	t.Helper()
	b := &base{name: k8sDir, configMap: "streambench-run"}
	data, err := os.ReadFile(filepath.Join(k8sDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeStrict(data, &b.k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	for _, r := range b.k.Resources {
		data, err := os.ReadFile(filepath.Join(k8sDir, r))
		if err != nil {
			t.Fatalf("kustomization.yaml resource: %v", err)
		}
		objs, err := decodeAll(r, data)
		if err != nil {
			t.Fatal(err)
		}
		b.objects = append(b.objects, objs...)
	}
	if len(b.k.ConfigMapGenerator) != 1 || len(b.k.ConfigMapGenerator[0].Envs) != 1 {
		t.Fatalf("kustomization.yaml: want one configMapGenerator with one env file, got %+v", b.k.ConfigMapGenerator)
	}
	b.params = readEnvFile(t, filepath.Join(k8sDir, b.k.ConfigMapGenerator[0].Envs[0]))
	return b
}

// kustomizeBuild decodes what `kubectl kustomize dir` (what kubectl apply -k applies) builds.
// It skips the test where kubectl is not installed.
func kustomizeBuild(t *testing.T, dir string) []object {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not installed")
	}
	out, err := exec.Command(kubectl, "kustomize", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, out)
	}
	objs, err := decodeAll("kubectl kustomize "+dir, out)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// loadBuilt is the overlay in dir as kubectl builds it; the run's parameters are its one
// generated ConfigMap's.
func loadBuilt(t *testing.T, dir string) *base {
	t.Helper()
	b := &base{name: dir}
	for _, o := range kustomizeBuild(t, dir) {
		cm, ok := o.obj.(*corev1.ConfigMap)
		if !ok {
			b.objects = append(b.objects, o)
			continue
		}
		if b.configMap != "" {
			t.Fatalf("%s: ConfigMaps %s and %s, want the one generated", dir, b.configMap, cm.Name)
		}
		b.configMap, b.params = cm.Name, cm.Data
	}
	if b.configMap == "" {
		t.Fatalf("%s: no generated ConfigMap", dir)
	}
	return b
}

// eachBase runs f on the base as written and on the small overlay as kubectl builds it.
func eachBase(t *testing.T, f func(t *testing.T, b *base)) {
	t.Run(k8sDir, func(t *testing.T) {
		t.Parallel()
		f(t, loadBase(t))
	})
	t.Run(smallOverlay, func(t *testing.T) {
		t.Parallel()
		f(t, loadBuilt(t, smallOverlay))
	})
}

func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s:%d: want KEY=VALUE, got %q", path, n, line)
		}
		out[k] = v
	}
	return out
}

func (b *base) deployments() []*appsv1.Deployment { return objectsOf[*appsv1.Deployment](b) }
func (b *base) jobs() []*batchv1.Job              { return objectsOf[*batchv1.Job](b) }
func (b *base) services() []*corev1.Service       { return objectsOf[*corev1.Service](b) }

func objectsOf[T any](b *base) []T {
	var out []T
	for _, o := range b.objects {
		if v, ok := o.obj.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func (b *base) job(t *testing.T, name string) *batchv1.Job {
	t.Helper()
	for _, j := range b.jobs() {
		if j.Name == name {
			return j
		}
	}
	t.Fatalf("no Job %s", name)
	return nil
}

// TestManifestsDecodeStrictly: every YAML file of deploy/k8s is in the kustomization and
// decodes strictly into the official Kubernetes types, and the decoder rejects what kubectl
// would (a row per kind of mistake).
func TestManifestsDecodeStrictly(t *testing.T) {
	t.Parallel()
	b := loadBase(t)
	files, err := filepath.Glob(filepath.Join(k8sDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := filepath.Base(f); name != "kustomization.yaml" && !slices.Contains(b.k.Resources, name) {
			t.Errorf("%s is not in kustomization.yaml's resources: kubectl apply -k would skip it", name)
		}
	}
	kinds := map[string]int{}
	for _, o := range b.objects {
		kinds[fmt.Sprintf("%T", o.obj)]++
	}
	want := map[string]int{"*v1.Deployment": 2, "*v1.Service": 2, "*v1.Job": 3, "*v1.PersistentVolumeClaim": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%s: %d objects, want %d (all: %v)", k, kinds[k], n, kinds)
		}
	}

	for _, c := range []struct {
		name, doc, wantErr string
	}{
		// A valid object decodes.
		{"valid", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n", ""},
		// A misspelt field is not silently dropped.
		{"unknown field", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {prots: [{port: 80}]}\n", `unknown field "prots"`},
		// A field at the wrong level neither.
		{"misplaced field", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {containers: []}}, restartPolicy: Never}\n", `unknown field "restartPolicy"`},
		// The same key twice: YAML keeps the last, the author meant one of them.
		{"duplicate key", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nmetadata: {name: t}\n", "duplicate"},
		// A wrong type.
		{"wrong type", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {completions: four}\n", "cannot unmarshal"},
		// A kind this test does not know is not waved through.
		{"unknown kind", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "not a type this test decodes"},
	} {
		_, err := decodeAll(c.name, []byte(c.doc))
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.wantErr)
		}
	}
}

// TestKustomizeBuild: `kubectl kustomize` (what kubectl apply -k runs) of deploy/k8s and of
// the small overlay builds, its output decodes strictly, and every ConfigMap a pod reads is one
// it generated (the hashed name substituted). Skipped where kubectl is not installed.
func TestKustomizeBuild(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{k8sDir, smallOverlay} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			checkBuilt(t, kustomizeBuild(t, dir))
		})
	}
}

func checkBuilt(t *testing.T, objs []object) {
	configMaps := map[string]bool{}
	var pods []corev1.PodSpec
	for _, o := range objs {
		switch v := o.obj.(type) {
		case *corev1.ConfigMap:
			configMaps[v.Name] = true
		case *appsv1.Deployment:
			pods = append(pods, v.Spec.Template.Spec)
		case *batchv1.Job:
			pods = append(pods, v.Spec.Template.Spec)
		}
	}
	if len(configMaps) != 1 {
		t.Errorf("generated ConfigMaps %v, want one", configMaps)
	}
	for _, p := range pods {
		for _, c := range slices.Concat(p.InitContainers, p.Containers) {
			if c.Image == streambenchImage {
				t.Errorf("container %s: image %q not set by kustomization.yaml's images", c.Name, c.Image)
			}
			for _, e := range c.Env {
				if r := e.ValueFrom; r != nil && r.ConfigMapKeyRef != nil && !configMaps[r.ConfigMapKeyRef.Name] {
					t.Errorf("container %s env %s: ConfigMap %s is not the generated one (%v)", c.Name, e.Name, r.ConfigMapKeyRef.Name, configMaps)
				}
			}
		}
	}
}

// podProblems lists what a workload's pod breaks of the rules every pod here keeps: non-root
// with no privilege to gain, a read-only root, requests and limits on every container.
func podProblems(p corev1.PodSpec) []string {
	var out []string
	sc := p.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		out = append(out, "pod securityContext.runAsNonRoot is not true")
	}
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		out = append(out, "pod securityContext.runAsUser is not a non-root uid")
	}
	for _, c := range slices.Concat(p.InitContainers, p.Containers) {
		csc := c.SecurityContext
		if csc == nil || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation {
			out = append(out, c.Name+": allowPrivilegeEscalation is not false")
		}
		if csc == nil || csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem {
			out = append(out, c.Name+": readOnlyRootFilesystem is not true")
		}
		if csc == nil || csc.Capabilities == nil || !slices.Contains(csc.Capabilities.Drop, "ALL") {
			out = append(out, c.Name+": capabilities do not drop ALL")
		}
		if csc != nil && csc.RunAsUser != nil && *csc.RunAsUser == 0 {
			out = append(out, c.Name+": runs as root")
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := c.Resources.Requests[r]; !ok {
				out = append(out, fmt.Sprintf("%s: no %s request", c.Name, r))
			}
			if _, ok := c.Resources.Limits[r]; !ok {
				out = append(out, fmt.Sprintf("%s: no %s limit", c.Name, r))
			}
		}
	}
	return out
}

// serverProblems lists what a server Deployment breaks: one replica (the leak check and the
// mock's session records read one process), probes on /healthz of a named container port,
// and /metrics annotated for scraping on that port.
func serverProblems(d *appsv1.Deployment) []string {
	var out []string
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		out = append(out, "replicas is not 1")
	}
	p := d.Spec.Template.Spec
	if len(p.Containers) != 1 {
		return append(out, fmt.Sprintf("%d containers, want 1", len(p.Containers)))
	}
	c := p.Containers[0]
	ports := map[string]int32{}
	for _, cp := range c.Ports {
		ports[cp.Name] = cp.ContainerPort
	}
	for name, probe := range map[string]*corev1.Probe{"readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe} {
		switch {
		case probe == nil || probe.HTTPGet == nil:
			out = append(out, name+": no httpGet probe")
		case probe.HTTPGet.Path != "/healthz":
			out = append(out, fmt.Sprintf("%s: path %q, want /healthz", name, probe.HTTPGet.Path))
		case ports[probe.HTTPGet.Port.String()] == 0:
			out = append(out, fmt.Sprintf("%s: port %q is not a named container port", name, probe.HTTPGet.Port.String()))
		}
	}
	out = append(out, scrapeProblems(d.Spec.Template.Annotations, c)...)
	return out
}

// scrapeProblems: the pod asks to be scraped on one of c's ports at /metrics.
func scrapeProblems(ann map[string]string, c corev1.Container) []string {
	var out []string
	if ann["prometheus.io/scrape"] != "true" {
		out = append(out, `annotation prometheus.io/scrape is not "true"`)
	}
	if ann["prometheus.io/path"] != "/metrics" {
		out = append(out, "annotation prometheus.io/path is not /metrics")
	}
	port, _ := strconv.Atoi(ann["prometheus.io/port"])
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return int(p.ContainerPort) == port }) {
		out = append(out, fmt.Sprintf("annotation prometheus.io/port %q is not a port of container %s", ann["prometheus.io/port"], c.Name))
	}
	return out
}

// TestWorkloadInvariants: the pods and servers keep the rules above, each Service selects its
// Deployment's pods on a port they have, every volume is the shared claim, and it is
// ReadWriteMany. The rows below break one rule each on a copy, to show each check can fail.
func TestWorkloadInvariants(t *testing.T) {
	t.Parallel()
	eachBase(t, workloadInvariants)
}

func workloadInvariants(t *testing.T, b *base) {
	for _, d := range b.deployments() {
		for _, p := range slices.Concat(podProblems(d.Spec.Template.Spec), serverProblems(d)) {
			t.Errorf("Deployment %s: %s", d.Name, p)
		}
	}
	for _, j := range b.jobs() {
		for _, p := range podProblems(j.Spec.Template.Spec) {
			t.Errorf("Job %s: %s", j.Name, p)
		}
		if rp := j.Spec.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyNever {
			t.Errorf("Job %s: restartPolicy %q, want Never (a rerun in place would count its sessions twice)", j.Name, rp)
		}
	}
	for _, s := range b.services() {
		var target *appsv1.Deployment
		for _, d := range b.deployments() {
			if labelsMatch(s.Spec.Selector, d.Spec.Template.Labels) {
				target = d
			}
		}
		if target == nil {
			t.Errorf("Service %s: selector %v matches no Deployment's pods", s.Name, s.Spec.Selector)
			continue
		}
		for _, sp := range s.Spec.Ports {
			if !slices.ContainsFunc(target.Spec.Template.Spec.Containers[0].Ports, func(p corev1.ContainerPort) bool { return p.Name == sp.TargetPort.String() }) {
				t.Errorf("Service %s port %d: targetPort %q is not a named port of %s", s.Name, sp.Port, sp.TargetPort.String(), target.Name)
			}
		}
	}
	claims := map[string]*corev1.PersistentVolumeClaim{}
	for _, c := range objectsOf[*corev1.PersistentVolumeClaim](b) {
		claims[c.Name] = c
		if !slices.Contains(c.Spec.AccessModes, corev1.ReadWriteMany) {
			t.Errorf("PVC %s: access modes %v: the shards' pods on several nodes need ReadWriteMany", c.Name, c.Spec.AccessModes)
		}
	}
	for _, j := range b.jobs() {
		for _, v := range j.Spec.Template.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && claims[v.PersistentVolumeClaim.ClaimName] == nil {
				t.Errorf("Job %s volume %s: claim %s is not in the base", j.Name, v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}
	}

	// Each row breaks one rule of a copy of the mock's Deployment; its check must say so.
	mock := func() *appsv1.Deployment {
		for _, d := range b.deployments() {
			if d.Name == "streambench-mock" {
				return d.DeepCopy()
			}
		}
		t.Fatal("no Deployment streambench-mock")
		return nil
	}
	root, yes, two := int64(0), true, int32(2)
	for _, c := range []struct {
		name   string
		break_ func(d *appsv1.Deployment)
		want   string
	}{
		// Root: the pod's uid 0.
		{"root", func(d *appsv1.Deployment) { d.Spec.Template.Spec.SecurityContext.RunAsUser = &root }, "runAsUser is not a non-root uid"},
		// A container that may gain privileges.
		{"escalation", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &yes
		}, "allowPrivilegeEscalation"},
		// No memory limit.
		{"no limit", func(d *appsv1.Deployment) {
			delete(d.Spec.Template.Spec.Containers[0].Resources.Limits, corev1.ResourceMemory)
		}, "no memory limit"},
		// A probe on the wrong path.
		{"probe path", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Path = "/" }, `readinessProbe: path "/"`},
		// No liveness probe.
		{"no liveness", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].LivenessProbe = nil }, "livenessProbe: no httpGet probe"},
		// Scraped on a port the container does not have.
		{"scrape port", func(d *appsv1.Deployment) { d.Spec.Template.Annotations["prometheus.io/port"] = "9999" }, "prometheus.io/port"},
		// Two mocks would split the session records.
		{"replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = &two }, "replicas is not 1"},
	} {
		d := mock()
		c.break_(d)
		got := strings.Join(slices.Concat(podProblems(d.Spec.Template.Spec), serverProblems(d)), "; ")
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: problems %q, want one containing %q", c.name, got, c.want)
		}
	}
}

func labelsMatch(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// argValue is the value of --name=V or --name V in args ("" when absent).
func argValue(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func container(t *testing.T, j *batchv1.Job, name string, init bool) corev1.Container {
	t.Helper()
	list := j.Spec.Template.Spec.Containers
	if init {
		list = j.Spec.Template.Spec.InitContainers
	}
	for _, c := range list {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("Job %s: no container %s", j.Name, name)
	return corev1.Container{}
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// TestShardedRun: the load is an Indexed Job of N shards, all started together, each with
// its own output directory on the shared volume, and N agrees everywhere it is written: the
// Job's completions and parallelism, --shards, the merge's wait and its shard directories.
func TestShardedRun(t *testing.T) {
	t.Parallel()
	eachBase(t, shardedRun)
}

func shardedRun(t *testing.T, b *base) {
	load := b.job(t, "streambench-load")
	spec := load.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("load Job: completionMode %v, want Indexed", spec.CompletionMode)
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism {
		t.Fatalf("load Job: completions %v and parallelism %v, want equal (all shards at once)", spec.Completions, spec.Parallelism)
	}
	n := int(*spec.Completions)
	if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex != 0 {
		t.Errorf("load Job: backoffLimitPerIndex %v, want 0: a retried shard would start late and count twice", spec.BackoffLimitPerIndex)
	}
	c := container(t, load, "load", false)
	args := c.Args
	if len(args) == 0 || args[0] != "load" {
		t.Fatalf("load container args %q: want the load command", args)
	}
	if got := argValue(args, "shards"); got != strconv.Itoa(n) {
		t.Errorf("load: --shards %q, want %d (the Job's completions)", got, n)
	}
	if got := argValue(args, "start-at"); got != "$(START_AT)" {
		t.Errorf("load: --start-at %q, want $(START_AT) from params.env", got)
	}
	if _, err := time.Parse(time.RFC3339, b.params["START_AT"]); err != nil {
		t.Errorf("params.env START_AT: %v", err)
	}
	if b.params["RUN_ID"] == "" {
		t.Error("params.env: no RUN_ID")
	}
	if !slices.Contains(args, "--no-leak-check") {
		t.Error("load: no --no-leak-check: parallel shards would see each other's streams (the merge checks leaks once)")
	}
	if argValue(args, "run-id") == "" || argValue(args, "out") == "" {
		t.Errorf("load: --run-id %q --out %q: every shard must share the run id and the results volume (shard I writes OUT/RUN-ID/shard-I)", argValue(args, "run-id"), argValue(args, "out"))
	}
	if argValue(args, "metrics-addr") == "" {
		t.Error("load: no --metrics-addr: the run cannot be watched")
	}
	if problems := scrapeProblems(load.Spec.Template.Annotations, c); len(problems) > 0 {
		t.Errorf("load: %v", problems)
	}
	shardDir := argValue(args, "out") + "/" + argValue(args, "run-id") + "/shard-%d" // as load writes a shard's results

	merge := b.job(t, "streambench-merge")
	wait := container(t, merge, "wait-for-shards", true)
	if got := envValue(wait, "SHARDS"); got != strconv.Itoa(n) {
		t.Errorf("merge wait-for-shards: SHARDS %q, want %d", got, n)
	}
	if script := strings.Join(wait.Command, " "); !strings.Contains(script, "/"+measure.SummaryFile) || !strings.Contains(script, `"incomplete"`) {
		t.Errorf("merge wait-for-shards does not wait for a complete %s, the file measure.WriteRun writes last:\n%s", measure.SummaryFile, script)
	}
	m := container(t, merge, "merge", true)
	var inits []string
	for _, c := range merge.Spec.Template.Spec.InitContainers {
		inits = append(inits, c.Name)
	}
	if !slices.Equal(inits, []string{"wait-for-shards", "merge"}) {
		t.Errorf("merge Job: init containers %q, want [wait-for-shards merge]: they run in that order, and the merge must wait for the shards (a strategic-merge patch naming only the merge puts it first)", inits)
	}
	var dirs []string
	for _, a := range m.Args[1:] {
		if !strings.HasPrefix(a, "-") {
			dirs = append(dirs, a)
		}
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf(shardDir, i))
	}
	if !slices.Equal(dirs, want) {
		t.Errorf("merge directories %q, want the %d shards' %q", dirs, n, want)
	}
	if argValue(m.Args, "leak-baseline") == "" {
		t.Error("merge: no --leak-baseline: the run's one leak check would not happen")
	}
	if v := envValue(m, "GOMEMLIMIT"); v == "" {
		t.Error("merge: no GOMEMLIMIT: near its memory limit the GC would not work harder, and the pod is killed")
	} else if q, err := resource.ParseQuantity(strings.TrimSuffix(v, "B")); err != nil || q.Cmp(*m.Resources.Limits.Memory()) >= 0 {
		t.Errorf("merge: GOMEMLIMIT %s is not below the memory limit %s", v, m.Resources.Limits.Memory())
	}
	baseline := container(t, b.job(t, "streambench-leak-baseline"), "leak-baseline", false)
	if got, want := argValue(baseline.Args, "out"), argValue(m.Args, "leak-baseline"); got != want {
		t.Errorf("leak baseline written to %q, merge reads %q", got, want)
	}
	gate := container(t, merge, "gate", false)
	if got, want := argValue(gate.Args, "current"), argValue(m.Args, "out"); got != want {
		t.Errorf("gate judges %q, merge writes %q", got, want)
	}
}

// Measured per-stream costs (docs/BENCHMARKS.md, "streambench bench scale", and a 500-client default-mix
// run): RSS per open stream, the process's own RSS before streams, frames per second per
// stream, CPU per frame.
const (
	rssPerStream     = 14.3 * 1024
	rssBase          = 60 << 20
	framesPerSecond  = 20
	cpuPerFrame      = 28.8e-6
	gcHeadroomFactor = 2 // RSS may reach twice live heap before a collection (GOGC=100)
)

// shardSize is what one shard of args needs: memory in bytes and CPU in cores.
func shardSize(args []string) (memory, cpu float64, err error) {
	clients, err := strconv.Atoi(argValue(args, "clients"))
	if err != nil {
		return 0, 0, fmt.Errorf("--clients: %w", err)
	}
	shards, err := strconv.Atoi(argValue(args, "shards"))
	if err != nil || shards <= 0 {
		return 0, 0, fmt.Errorf("--shards %q: want a positive count", argValue(args, "shards"))
	}
	streams := float64(clients) / float64(shards)
	return rssBase + streams*rssPerStream, streams * framesPerSecond * cpuPerFrame, nil
}

// sizeProblems: the requests cover the shard's measured needs, the memory limit the GC's
// headroom above them, and GOMEMLIMIT sits below the limit.
func sizeProblems(c corev1.Container) []string {
	memory, cpu, err := shardSize(c.Args)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	req, lim := c.Resources.Requests, c.Resources.Limits
	if got := req.Cpu().AsApproximateFloat64(); got < cpu {
		out = append(out, fmt.Sprintf("cpu request %s < %.2f cores needed", req.Cpu(), cpu))
	}
	if got := req.Memory().AsApproximateFloat64(); got < memory {
		out = append(out, fmt.Sprintf("memory request %s < %.0f MiB needed", req.Memory(), memory/(1<<20)))
	}
	if got := lim.Memory().AsApproximateFloat64(); got < memory*gcHeadroomFactor {
		out = append(out, fmt.Sprintf("memory limit %s < %.0f MiB (the need × GC headroom)", lim.Memory(), memory*gcHeadroomFactor/(1<<20)))
	}
	if lim.Cpu().Cmp(*req.Cpu()) < 0 {
		out = append(out, "cpu limit below the request")
	}
	if v := envValue(c, "GOMEMLIMIT"); v != "" {
		q, err := resource.ParseQuantity(strings.TrimSuffix(v, "B"))
		if err != nil || q.Cmp(*lim.Memory()) >= 0 {
			out = append(out, fmt.Sprintf("GOMEMLIMIT %s is not below the memory limit %s", v, lim.Memory()))
		}
	}
	return out
}

// TestShardResources: the load's requests and limits follow from its args and the measured
// per-stream costs, so raising --clients without resizing the pods fails here.
func TestShardResources(t *testing.T) {
	t.Parallel()
	eachBase(t, shardResources)
}

func shardResources(t *testing.T, b *base) {
	c := container(t, b.job(t, "streambench-load"), "load", false)
	for _, p := range sizeProblems(c) {
		t.Errorf("load shard: %s", p)
	}
	// Each row sizes the same container for a different load; the check must notice.
	for _, row := range []struct {
		name string
		edit func(c *corev1.Container)
		want string
	}{
		// Twice the clients on the same pods.
		{"clients doubled", func(c *corev1.Container) {
			for i, a := range c.Args {
				if strings.HasPrefix(a, "--clients=") {
					n, _ := strconv.Atoi(strings.TrimPrefix(a, "--clients="))
					c.Args[i] = fmt.Sprintf("--clients=%d", 2*n)
				}
			}
		}, "cpu request"},
		// A memory limit with no headroom.
		{"tight limit", func(c *corev1.Container) {
			c.Resources.Limits[corev1.ResourceMemory] = c.Resources.Requests[corev1.ResourceMemory]
		}, "memory limit"},
		// GOMEMLIMIT at the limit leaves nothing for what the Go heap does not count.
		{"gomemlimit", func(c *corev1.Container) {
			for i := range c.Env {
				if c.Env[i].Name == "GOMEMLIMIT" {
					c.Env[i].Value = "1GiB"
				}
			}
		}, "GOMEMLIMIT"},
	} {
		cc := *c.DeepCopy()
		row.edit(&cc)
		if got := strings.Join(sizeProblems(cc), "; "); !strings.Contains(got, row.want) {
			t.Errorf("%s: problems %q, want one containing %q", row.name, got, row.want)
		}
	}
}

// A small node, what deploy/overlays/small is for, and the share of it the cluster's own pods
// take (CoreDNS's two replicas request 100m and 70Mi each; kube-proxy, a CNI agent).
const (
	smallNodeCPU      = 2.0
	smallNodeMemory   = 4 << 30
	clusterPodsCPU    = 0.5
	clusterPodsMemory = 512 << 20
)

// podRequests is what the scheduler reserves for a pod: the larger of its largest init
// container's requests and the sum of its containers'.
func podRequests(p corev1.PodSpec) (cpu, memory float64) {
	for _, c := range p.Containers {
		cpu += c.Resources.Requests.Cpu().AsApproximateFloat64()
		memory += c.Resources.Requests.Memory().AsApproximateFloat64()
	}
	for _, c := range p.InitContainers {
		cpu = max(cpu, c.Resources.Requests.Cpu().AsApproximateFloat64())
		memory = max(memory, c.Resources.Requests.Memory().AsApproximateFloat64())
	}
	return cpu, memory
}

// nodeFitProblems: applying the base creates every pod at once (each Deployment's replicas,
// each Job's parallelism: the shards wait for the baseline and the merge for the shards in
// their init containers, holding their requests all along), so their requests together must
// fit the node beside the cluster's own pods; and no container's limit may exceed the node,
// where it would bound nothing.
func nodeFitProblems(b *base, nodeCPU, nodeMemory float64) []string {
	var cpu, memory float64
	var out []string
	add := func(what string, p corev1.PodSpec, n int32) {
		c, m := podRequests(p)
		cpu += float64(n) * c
		memory += float64(n) * m
		for _, c := range slices.Concat(p.InitContainers, p.Containers) {
			if l := c.Resources.Limits; l.Cpu().AsApproximateFloat64() > nodeCPU || l.Memory().AsApproximateFloat64() > nodeMemory {
				out = append(out, fmt.Sprintf("%s container %s: limits %s CPU, %s memory exceed the node's", what, c.Name, l.Cpu(), l.Memory()))
			}
		}
	}
	for _, d := range b.deployments() {
		add("Deployment "+d.Name, d.Spec.Template.Spec, ptrOr(d.Spec.Replicas, 1))
	}
	for _, j := range b.jobs() {
		add("Job "+j.Name, j.Spec.Template.Spec, ptrOr(j.Spec.Parallelism, 1))
	}
	if cpu > nodeCPU-clusterPodsCPU || memory > nodeMemory-clusterPodsMemory {
		out = append(out, fmt.Sprintf("the pods request %.2f cores and %.0f MiB at once; a node of %.0f cores and %.0f MiB has %.2f and %.0f for them",
			cpu, memory/(1<<20), nodeCPU, nodeMemory/(1<<20), nodeCPU-clusterPodsCPU, (nodeMemory-clusterPodsMemory)/(1<<20)))
	}
	return out
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// TestSmallOverlayFitsASmallNode: deploy/overlays/small runs the whole base on a node of 2
// cores and 4 GiB with every limit a real bound (deploy/k8s/realnode/run.sh runs it on one);
// the base itself does not fit, which shows the check can fail.
func TestSmallOverlayFitsASmallNode(t *testing.T) {
	t.Parallel()
	for _, p := range nodeFitProblems(loadBuilt(t, smallOverlay), smallNodeCPU, smallNodeMemory) {
		t.Errorf("%s: %s", smallOverlay, p)
	}
	if p := nodeFitProblems(loadBase(t), smallNodeCPU, smallNodeMemory); len(p) == 0 {
		t.Errorf("the base (11 cores of requests) fits a small node by nodeFitProblems")
	}
}

// expand does what the kubelet does to a container's args: $(VAR) becomes the value of an env
// var the container defines, $$ a literal $, and an undefined reference stays as written.
func expand(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			if end := strings.IndexByte(s[i:], ')'); end > 0 {
				if v, ok := env[s[i+2:i+end]]; ok {
					b.WriteString(v)
					i += end
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// containerEnv is c's environment as the kubelet would set it for the first pod: values,
// the run's ConfigMap (b's params), and index 0 for the completion index.
func containerEnv(c corev1.Container, b *base) (map[string]string, error) {
	env := map[string]string{}
	for _, e := range c.Env {
		switch r := e.ValueFrom; {
		case r == nil:
			env[e.Name] = expand(e.Value, env)
		case r.ConfigMapKeyRef != nil:
			v, ok := b.params[r.ConfigMapKeyRef.Key]
			if r.ConfigMapKeyRef.Name != b.configMap || !ok {
				return nil, fmt.Errorf("env %s: ConfigMap %s key %s is not the run's (%s)", e.Name, r.ConfigMapKeyRef.Name, r.ConfigMapKeyRef.Key, b.configMap)
			}
			env[e.Name] = v
		case r.FieldRef != nil && r.FieldRef.FieldPath == "metadata.annotations['batch.kubernetes.io/job-completion-index']":
			env[e.Name] = "0"
		default:
			return nil, fmt.Errorf("env %s: a source this test does not resolve", e.Name)
		}
	}
	return env, nil
}

// buildStreambench builds the command once for the test.
func buildStreambench(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "streambench")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/streambench").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ../cmd/streambench: %v\n%s", err, out)
	}
	return bin
}

// checkArgs runs bin with args under STREAMBENCH_CHECK_ARGS=1: the command parses its flags
// with its real flag set and exits without running. It returns what it said on failure.
func checkArgs(bin string, args []string, env map[string]string) error {
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"STREAMBENCH_CHECK_ARGS=1"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			// The first line says what was wrong; an unknown command's usage follows it.
			first, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
			return fmt.Errorf("%w: %s", err, first)
		}
		if !strings.Contains(out.String(), "flags parse") {
			return fmt.Errorf("exited 0 without the check's confirmation (did the command parse its flags with parseFlags?): %s", strings.TrimSpace(out.String()))
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return fmt.Errorf("still running after 30 s: the command ran instead of only parsing its flags")
	}
}

// pprofArg returns the --pprof argument of args ("" without one): profiles are off unless
// asked for, and a manifest never asks (the mock and the runtime serve no /debug/pprof/ on
// their ports, and a --pprof listener reached from the cluster would show their memory).
func pprofArg(args []string) string {
	for _, a := range args {
		if a == "--pprof" || strings.HasPrefix(a, "--pprof=") {
			return a
		}
	}
	return ""
}

// TestContainerArgsParse: every streambench container of every workload, its args expanded as
// the kubelet expands them, parses with the real streambench flag sets (the binary, under
// STREAMBENCH_CHECK_ARGS=1). Each failing list is reported on its own. The rows after show
// the check failing for what it must catch.
func TestContainerArgsParse(t *testing.T) {
	t.Parallel()
	bin := buildStreambench(t)
	eachBase(t, func(t *testing.T, b *base) { containerArgsParse(t, b, bin) })

	// pprofArg catches profiling turned on in a manifest, in either spelling.
	for _, args := range [][]string{{"runtime", "--pprof=:6060"}, {"mock", "--pprof", "0.0.0.0:6060"}} {
		if pprofArg(args) == "" {
			t.Errorf("pprofArg(%q) found no --pprof", args)
		}
	}
	if a := pprofArg([]string{"mock", "--addr=:8081"}); a != "" {
		t.Errorf("pprofArg found %q in args without --pprof", a)
	}

	for _, c := range []struct {
		name string
		args []string
		want string // "" when the args parse
	}{
		// A list that parses.
		{"valid", []string{"mock", "--addr=:8081"}, ""},
		// A misspelt flag.
		{"unknown flag", []string{"runtime", "--adr=:8080"}, "unknown flag: --adr"},
		// A value of the wrong type.
		{"bad value", []string{"mock", "--time-scale=fast"}, "invalid argument"},
		// A value-taking flag left without one (an appended --help or flag would be swallowed).
		{"dangling", []string{"gate", "--current"}, "flag needs an argument"},
		// A command that does not exist.
		{"unknown command", []string{"serve-all"}, "unknown command"},
	} {
		err := checkArgs(bin, c.args, nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// streambenchImage is the image name the manifests give streambench's containers; a built
// overlay has the tag kustomization.yaml's images set.
const streambenchImage = "streambench"

func isStreambench(image string) bool {
	name, _, _ := strings.Cut(image, ":")
	return name == streambenchImage
}

func containerArgsParse(t *testing.T, b *base, bin string) {
	type workload struct {
		name string
		pod  corev1.PodSpec
	}
	var workloads []workload
	for _, d := range b.deployments() {
		workloads = append(workloads, workload{"Deployment " + d.Name, d.Spec.Template.Spec})
	}
	for _, j := range b.jobs() {
		workloads = append(workloads, workload{"Job " + j.Name, j.Spec.Template.Spec})
	}
	checked := 0
	for _, w := range workloads {
		for _, c := range slices.Concat(w.pod.InitContainers, w.pod.Containers) {
			if !isStreambench(c.Image) {
				continue
			}
			checked++
			if len(c.Command) > 0 {
				t.Errorf("%s container %s: command %q overrides the image's ENTRYPOINT streambench", w.name, c.Name, c.Command)
				continue
			}
			env, err := containerEnv(c, b)
			if err != nil {
				t.Errorf("%s container %s: %v", w.name, c.Name, err)
				continue
			}
			args := make([]string, len(c.Args))
			for i, a := range c.Args {
				args[i] = expand(a, env)
			}
			if err := checkArgs(bin, args, env); err != nil {
				t.Errorf("%s container %s: streambench %s\n  %v", w.name, c.Name, strings.Join(args, " "), err)
			}
			if a := pprofArg(args); a != "" {
				t.Errorf("%s container %s: %s serves Go profiles from the pod; keep profiling out of the manifests (kubectl port-forward to a --pprof on loopback instead)", w.name, c.Name, a)
			}
		}
	}
	if checked < 6 {
		t.Errorf("checked %d streambench containers, want every one of the 6", checked)
	}
}

// TestLoadMetricsMatchDashboard: every streambench series the Grafana dashboard queries is one
// `load --metrics-addr` serves, and it shows each of the run's live figures.
func TestLoadMetricsMatchDashboard(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("grafana", "streambench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("grafana/streambench.json: %v", err)
	}
	served := map[string]bool{}
	for _, n := range []string{measure.OpenStreams.Live(), measure.SessionsStarted.Live(), measure.ByOutcome.Live(), measure.Violations.Live(),
		measure.Errors.Live(), measure.Frames.Live(), measure.Draining.Live()} {
		served[n] = true
	}
	for _, h := range []string{measure.FirstChunk.Live(), measure.ChunkGap.Live()} {
		served[h+"_bucket"], served[h+"_sum"], served[h+"_count"] = true, true, true
	}
	name := regexp.MustCompile(`streambench_[a-z_]+`)
	var exprs []string
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			continue
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
			for _, n := range name.FindAllString(tg.Expr, -1) {
				if !served[n] {
					t.Errorf("panel %q queries %s, which load --metrics-addr does not serve", p.Title, n)
				}
			}
		}
	}
	all := strings.Join(exprs, "\n")
	for _, want := range []string{
		measure.OpenStreams.Live(),
		measure.ByOutcome.Live(),
		measure.Violations.Live(),
		"histogram_quantile(0.5, sum by (le) (rate(" + measure.FirstChunk.Live() + "_bucket",
		"histogram_quantile(0.99, sum by (le) (rate(" + measure.FirstChunk.Live() + "_bucket",
		"histogram_quantile(0.99, sum by (le) (rate(" + measure.ChunkGap.Live() + "_bucket",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no panel queries %s", want)
		}
	}
}

// dockerfileProblems lists what keeps a Dockerfile from a static, non-root streambench image
// on a minimal base: a golang builder on go.mod's Go, a cgo-free build of ./cmd/streambench,
// a final stage on distroless static or scratch, a numeric non-root USER, ENTRYPOINT the
// binary. uid is the USER's.
func dockerfileProblems(text, goVersion string) (uid int64, problems []string) {
	var froms []string
	var build, user, entrypoint string
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, f[1])
		case "RUN":
			if strings.Contains(line, "go build") {
				build = line
			}
		case "USER":
			user = f[1]
		case "ENTRYPOINT":
			entrypoint = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), f[0]))
		}
	}
	if len(froms) < 2 {
		return 0, []string{fmt.Sprintf("%d FROM lines, want a builder stage and a final one", len(froms))}
	}
	if want := "golang:" + goVersion; !strings.HasPrefix(froms[0], want) {
		problems = append(problems, fmt.Sprintf("builder %s, want %s (go.mod's go line)", froms[0], want))
	}
	if !strings.Contains(build, "CGO_ENABLED=0") || !strings.Contains(build, "./cmd/streambench") {
		problems = append(problems, fmt.Sprintf("build %q is not a CGO_ENABLED=0 build of ./cmd/streambench (static)", build))
	}
	final := froms[len(froms)-1]
	if final != "scratch" && !strings.HasPrefix(final, "gcr.io/distroless/static") {
		problems = append(problems, fmt.Sprintf("final stage %s, want gcr.io/distroless/static or scratch", final))
	}
	uidText, _, _ := strings.Cut(user, ":")
	uid, err := strconv.ParseInt(uidText, 10, 64)
	if err != nil || uid == 0 {
		problems = append(problems, fmt.Sprintf("USER %q, want a numeric non-root uid (runAsNonRoot can verify only a number)", user))
	}
	if entrypoint != `["/streambench"]` {
		problems = append(problems, fmt.Sprintf(`ENTRYPOINT %s, want ["/streambench"]`, entrypoint))
	}
	return uid, problems
}

// goLine is go.mod's go version, major.minor.
func goLine(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod: no go line")
	}
	return string(m[1])
}

// TestDockerfile: the image is static, non-root and minimal, and the manifests run it as the
// uid it names. Nothing here can build it; the rows show each check failing.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := goLine(t)
	uid, problems := dockerfileProblems(string(data), goVersion)
	for _, p := range problems {
		t.Errorf("Dockerfile: %s", p)
	}
	b := loadBase(t)
	var pods []corev1.PodSpec
	for _, d := range b.deployments() {
		pods = append(pods, d.Spec.Template.Spec)
	}
	for _, j := range b.jobs() {
		pods = append(pods, j.Spec.Template.Spec)
	}
	for _, p := range pods {
		if sc := p.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != uid {
			t.Errorf("a pod runs as %v, the image's USER is %d", sc, uid)
		}
	}
	ok := string(data)
	for _, c := range []struct {
		name, from, to, want string
	}{
		// Root in the final image.
		{"root", "USER 65532:65532", "USER root", "numeric non-root"},
		// A cgo build links libc, which distroless/static does not have.
		{"cgo", "CGO_ENABLED=0 ", "", "CGO_ENABLED=0"},
		// A full distribution as the final stage.
		{"base", "gcr.io/distroless/static-debian12:nonroot", "debian:12", "final stage"},
		// A shell form entrypoint needs a shell.
		{"entrypoint", `ENTRYPOINT ["/streambench"]`, "ENTRYPOINT /streambench", "ENTRYPOINT"},
		// Another Go than go.mod's.
		{"go version", "golang:" + goVersion, "golang:1.20", "go.mod's go line"},
	} {
		if !strings.Contains(ok, c.from) {
			t.Fatalf("%s: the Dockerfile has no %q to replace", c.name, c.from)
		}
		_, problems := dockerfileProblems(strings.Replace(ok, c.from, c.to, 1), goVersion)
		if got := strings.Join(problems, "; "); !strings.Contains(got, c.want) {
			t.Errorf("%s: problems %q, want one containing %q", c.name, got, c.want)
		}
	}
}
