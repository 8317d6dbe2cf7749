package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/neemias/neemias-mcp/internal/config"
)

const deployDir = "../../deploy/kubernetes"

// manifests decodes every manifest under deploy/kubernetes strictly into its k8s.io/api type
// (an unknown or misspelt field fails), offline.
func manifests(t *testing.T) (cm corev1.ConfigMap, sec corev1.Secret, job batchv1.Job, dep appsv1.Deployment, svc corev1.Service,
	pdb policyv1.PodDisruptionBudget, hpa autoscalingv2.HorizontalPodAutoscaler) {
	t.Helper()
	targets := map[string]any{"ConfigMap": &cm, "Secret": &sec, "Job": &job, "Deployment": &dep, "Service": &svc,
		"PodDisruptionBudget": &pdb, "HorizontalPodAutoscaler": &hpa}
	files, _ := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	kust, err := os.ReadFile(filepath.Join(deployDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		if !strings.Contains(string(kust), "- "+filepath.Base(f)) {
			t.Errorf("kustomization.yaml does not list %s", filepath.Base(f))
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(b, &head); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		dst, ok := targets[head.Kind]
		if !ok || seen[head.Kind] {
			t.Fatalf("%s: unexpected or repeated kind %q", f, head.Kind)
		}
		seen[head.Kind] = true
		if err := yaml.UnmarshalStrict(b, dst); err != nil {
			t.Errorf("%s does not decode strictly as %s %s: %v", f, head.APIVersion, head.Kind, err)
		}
	}
	for k := range targets {
		if !seen[k] {
			t.Errorf("no %s manifest", k)
		}
	}
	return
}

// TestDeployManifests: the Kubernetes manifests decode strictly, name only settings that
// exist (every NEEMIAS_* variable is a flag's), carry valid values, and wire the probes,
// ports, secret file, selectors and commands to what the binary really serves.
func TestDeployManifests(t *testing.T) {
	cm, sec, job, dep, svc, pdb, hpa := manifests(t)
	flags := serveFlags(t)
	isSetting := func(env string) bool {
		found := false
		flags.VisitAll(func(f *pflag.Flag) { found = found || config.EnvName(f.Name) == env })
		return found
	}
	env := map[string]string{}
	for k, v := range cm.Data {
		env[k] = v
	}
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("containers: %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	for _, e := range append(append([]corev1.EnvVar{}, c.Env...), job.Spec.Template.Spec.Containers[0].Env...) {
		env[e.Name] = e.Value
	}
	for name := range env {
		if !isSetting(name) {
			t.Errorf("%s is not the variable of any serve flag", name)
		}
	}
	// The values pass the server's own validation (the secret file is checked below).
	var s config.Serve
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	s.AddFlags(fs)
	config.AddLogFlags(fs, &s.LogLevel)
	err := config.Apply(fs, func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok && k != "NEEMIAS_DATABASE_URL_FILE"
	})
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		t.Errorf("the ConfigMap's settings are refused: %v", err)
	}
	// Secret: the file the server reads is the Secret's key, mounted read-only.
	file := env["NEEMIAS_DATABASE_URL_FILE"]
	if _, ok := sec.StringData[filepath.Base(file)]; !ok {
		t.Errorf("NEEMIAS_DATABASE_URL_FILE %s is not a key of the Secret", file)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != filepath.Dir(file) || !c.VolumeMounts[0].ReadOnly ||
		pod.Volumes[0].Secret == nil || pod.Volumes[0].Secret.SecretName != sec.Name {
		t.Errorf("the Secret is not mounted where NEEMIAS_DATABASE_URL_FILE points")
	}
	// Commands, probes and ports.
	if _, _, err := root().Find(c.Args); err != nil || c.Args[0] != "serve" {
		t.Errorf("Deployment args %v", c.Args)
	}
	if sub, _, err := root().Find(job.Spec.Template.Spec.Containers[0].Args); err != nil || sub.Name() != "up" {
		t.Errorf("the migration Job's args %v are not neemias-mcp migrate up", job.Spec.Template.Spec.Containers[0].Args)
	}
	port := func(name string) int32 {
		for _, p := range c.Ports {
			if p.Name == name {
				return p.ContainerPort
			}
		}
		return 0
	}
	for name, addr := range map[string]string{"http": s.Addr, "metrics": s.MetricsAddr} {
		_, p, _ := net.SplitHostPort(addr)
		if p == "" || p != itoa(port(name)) {
			t.Errorf("container port %s (%d) is not the port of its address setting %q", name, port(name), addr)
		}
	}
	if rp := c.ReadinessProbe; rp == nil || rp.HTTPGet == nil || rp.HTTPGet.Path != "/readyz" || rp.HTTPGet.Port.String() != "http" {
		t.Errorf("readiness probe: %+v", rp)
	}
	if lp := c.LivenessProbe; lp == nil || lp.HTTPGet == nil || lp.HTTPGet.Path != "/healthz" || lp.HTTPGet.Port.String() != "http" {
		t.Errorf("liveness probe: %+v", lp)
	}
	// Non-root, no privilege.
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot ||
		c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("the pod may run as root or escalate")
	}
	// Selectors reach the pods; the autoscaler and the budget name the Deployment's pods.
	labels := dep.Spec.Template.Labels
	for what, sel := range map[string]map[string]string{"Service": svc.Spec.Selector, "PodDisruptionBudget": pdb.Spec.Selector.MatchLabels, "Deployment": dep.Spec.Selector.MatchLabels} {
		for k, v := range sel {
			if labels[k] != v {
				t.Errorf("the %s selector %s=%s does not match the pods", what, k, v)
			}
		}
	}
	if hpa.Spec.ScaleTargetRef.Kind != "Deployment" || hpa.Spec.ScaleTargetRef.Name != dep.Name || hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas < 2 {
		t.Errorf("HPA target %+v", hpa.Spec.ScaleTargetRef)
	}
	for _, p := range svc.Spec.Ports {
		if port(p.TargetPort.String()) == 0 {
			t.Errorf("Service port %s targets no container port", p.Name)
		}
	}
}

// TestDockerfile: a static binary of this command on a minimal base, run as non-root, with
// only real settings in its environment.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	d := string(b)
	for _, want := range []string{"CGO_ENABLED=0", "./cmd/neemias-mcp", "FROM gcr.io/distroless/static-debian12:nonroot", "USER nonroot:nonroot", `CMD ["serve"]`} {
		if !strings.Contains(d, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	flags := serveFlags(t)
	var names []string
	flags.VisitAll(func(f *pflag.Flag) { names = append(names, config.EnvName(f.Name)) })
	for _, m := range regexp.MustCompile(`NEEMIAS_[A-Z_]+`).FindAllString(d, -1) {
		if !slices.Contains(names, m) {
			t.Errorf("Dockerfile sets %s, which is no flag's variable", m)
		}
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// TestDockerImage builds the image and runs it once where a Docker daemon answers (not on the
// machines this project is developed and tested on, which have none: then it says so and skips).
func TestDockerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker on PATH: the image is not built here (TestDockerfile checks the file)")
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skipf("no Docker daemon answers (%v): the image is not built here", err)
	}
	tag := "neemias-mcp:test"
	if out, err := exec.Command("docker", "build", "-t", tag, "../..").CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	out, err := exec.Command("docker", "run", "--rm", tag, "serve", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--database-url") {
		t.Fatalf("the image does not run serve --help: %v\n%s", err, out)
	}
}
