package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestDeployPgBouncer: the PgBouncer option (deploy/kubernetes/pgbouncer) decodes strictly into
// the k8s.io/api types, offline, and fits together: transaction pooling with prepared
// statements, the config and userlist mounted where pgbouncer.ini says, the Service on the port
// PgBouncer listens on.
func TestDeployPgBouncer(t *testing.T) {
	dir := filepath.Join(deployDir, "pgbouncer")
	var (
		cm  corev1.ConfigMap
		sec corev1.Secret
		dep appsv1.Deployment
		svc corev1.Service
	)
	kust, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, dst := range map[string]any{"configmap.yaml": &cm, "secret.yaml": &sec, "deployment.yaml": &dep, "service.yaml": &svc} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(b, dst); err != nil {
			t.Errorf("%s does not decode strictly: %v", name, err)
		}
		if !strings.Contains(string(kust), "- "+name) {
			t.Errorf("kustomization.yaml does not list %s", name)
		}
	}
	ini := cm.Data["pgbouncer.ini"]
	setting := func(key string) string { return iniSetting(ini, key) }
	for _, line := range pgBouncerFailoverSettings(t) {
		if k, v, _ := strings.Cut(line, " = "); setting(k) != v {
			t.Errorf("pgbouncer.ini: %s = %q, want %s for a failover (docs/scale-out.md)", k, setting(k), line)
		}
	}
	if setting("pool_mode") != "transaction" || setting("max_prepared_statements") == "" || setting("max_prepared_statements") == "0" {
		t.Errorf("pgbouncer.ini: pool_mode %q, max_prepared_statements %q; want transaction pooling with prepared statements",
			setting("pool_mode"), setting("max_prepared_statements"))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	mounted := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounted[m.MountPath] = m.ReadOnly
	}
	if len(c.Command) != 2 || !mounted[c.Command[1]] {
		t.Errorf("command %v does not read the mounted pgbouncer.ini (mounts %v)", c.Command, mounted)
	}
	if auth := setting("auth_file"); !mounted[filepath.Dir(auth)] || sec.StringData[filepath.Base(auth)] == "" {
		t.Errorf("auth_file %s is not the mounted Secret's key", auth)
	}
	port, _ := strconv.Atoi(setting("listen_port"))
	if len(svc.Spec.Ports) != 1 || c.Ports[0].ContainerPort != int32(port) || svc.Spec.Ports[0].TargetPort.StrVal != c.Ports[0].Name {
		t.Errorf("the Service and container ports do not match listen_port %d", port)
	}
	if sc := dep.Spec.Template.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("PgBouncer must not run as root")
	}
}

// iniSetting is the value of key in a pgbouncer.ini text, "" when absent.
func iniSetting(ini, key string) string {
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(key) + `\s*=\s*(\S+)`).FindStringSubmatch(ini)
	if m == nil {
		return ""
	}
	return m[1]
}

// pgBouncerFailoverSettings are the lines of the shipped pgbouncer.ini
// (deploy/kubernetes/pgbouncer/configmap.yaml) that a database failover needs: the failover
// test runs PgBouncer with them, so the manifest is what is tested.
func pgBouncerFailoverSettings(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "pgbouncer", "configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(b, &cm); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, key := range []string{"server_login_retry", "query_wait_timeout"} {
		v := iniSetting(cm.Data["pgbouncer.ini"], key)
		if v == "" {
			t.Fatalf("deploy/kubernetes/pgbouncer/configmap.yaml sets no %s, which a failover needs (docs/scale-out.md)", key)
		}
		out = append(out, key+" = "+v)
	}
	return out
}
