// Package hatest starts the engines of a highly available PostgreSQL for the failover tests
// (cmd/neemias-mcp/failover_ha_test.go, `make test-ha`): etcd (one member), a Patroni
// cluster of PostgreSQL nodes with synchronous replication, and HAProxy routing to the node
// whose Patroni REST API says it is the primary. Everything listens on 127.0.0.1 ports of its
// own under one temporary folder, is started by the test and stopped by process id when the
// test ends; nothing of the machine's own PostgreSQL is touched.
//
// The engines are Debian's packages (patroni, etcd-server, etcd-client, haproxy,
// postgresql-15); `make test-deps-ha` installs them. [Require] skips a test that lacks one,
// except in CI (CI=true), where a missing engine fails the test: CI installs them.
package hatest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/freeport"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// Require returns the path of each named program (patroni, patronictl, etcd, haproxy,
// pgbouncer, or a PostgreSQL server program such as pg_ctl, found in PGBin), skipping the
// test when one is missing, or failing it when CI=true.
func Require(t testing.TB, programs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var missing []string
	for _, p := range programs {
		if path := find(p); path != "" {
			out[p] = path
		} else {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("missing %s: run make test-deps-ha (Debian's patroni, etcd-server, etcd-client, haproxy, pgbouncer, postgresql-15)", strings.Join(missing, ", "))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; CI installs them, so this is a failure")
		}
		t.Skip(msg)
	}
	return out
}

func find(program string) string {
	if bin := PGBin(); bin != "" {
		if p := filepath.Join(bin, program); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath(program); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin", "/sbin"} {
		if p := filepath.Join(d, program); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool { st, err := os.Stat(p); return err == nil && !st.IsDir() }

// PGBin is the newest /usr/lib/postgresql/*/bin holding pg_ctl, or "".
func PGBin() string {
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(m) == 0 {
		return ""
	}
	sort.Slice(m, func(i, j int) bool { return pgMajor(m[i]) < pgMajor(m[j]) })
	return filepath.Dir(m[len(m)-1])
}

func pgMajor(p string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
	return n
}

// Ports returns n distinct free loopback ports.
func Ports(t testing.TB, n int) []int {
	t.Helper()
	addrs, err := freeport.Addrs(n)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int, n)
	for i, a := range addrs {
		_, p, _ := net.SplitHostPort(a)
		out[i], _ = strconv.Atoi(p)
	}
	return out
}

// postgresUser is the account PostgreSQL (and so Patroni) runs as when the test is root:
// PostgreSQL refuses to run as root.
func postgresUser(t testing.TB) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatal("running as root without a postgres user to run PostgreSQL as")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// Proc is a process the test started; Stop ends it by its id.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	Out  *testsupport.Buffer
	done chan struct{}
	err  error
}

// Start starts a process with its output captured.
func Start(t testing.TB, name string, cred *syscall.Credential, bin string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "LANG=C.UTF-8")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cred != nil {
		cmd.SysProcAttr.Credential = cred
	}
	p := &Proc{Name: name, Cmd: cmd, Out: &testsupport.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Out, p.Out
	// A child that outlives the process (Patroni's PostgreSQL after a SIGKILL) keeps the
	// output pipe open: Wait returns a second after the process exits all the same.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p
}

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends sig to the process and waits up to grace for it to exit, then kills it.
func (p *Proc) Stop(sig syscall.Signal, grace time.Duration) {
	if p.Exited() {
		return
	}
	_ = p.Cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}

// Kill sends SIGKILL to the process and reaps it.
func (p *Proc) Kill() {
	if !p.Exited() {
		_ = p.Cmd.Process.Kill()
	}
	<-p.done
}

// Etcd is a one-member etcd.
type Etcd struct {
	Endpoint string // host:port of the client API
	proc     *Proc
}

// StartEtcd starts etcd in dir on two free ports.
func StartEtcd(t testing.TB, dir string) *Etcd {
	t.Helper()
	bin := Require(t, "etcd")["etcd"]
	ports := Ports(t, 2)
	client, peer := fmt.Sprintf("http://127.0.0.1:%d", ports[0]), fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	p := Start(t, "etcd", nil, bin, "--name", "e1", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "e1="+peer, "--initial-cluster-state", "new", "--log-level", "warn")
	e := &Etcd{Endpoint: fmt.Sprintf("127.0.0.1:%d", ports[0]), proc: p}
	t.Cleanup(func() {
		p.Stop(syscall.SIGTERM, 10*time.Second)
		if t.Failed() {
			t.Logf("etcd output:\n%s", LastLines(p.Out.String(), 20))
		}
	})
	waitFor(t, 30*time.Second, "etcd", func() error {
		resp, err := http.Get(client + "/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("health %d", resp.StatusCode)
		}
		return nil
	}, p)
	return e
}

// Node is one PostgreSQL under Patroni.
type Node struct {
	Name             string
	PGPort, RESTPort int
	Dir              string // the node's folder: patroni.yml, data/
	Config           string // patroni.yml
	proc             *Proc
	cluster          *Cluster
}

// Cluster is a Patroni cluster.
type Cluster struct {
	Scope string
	Nodes []*Node
	Etcd  *Etcd
	dir   string
	cred  *syscall.Credential
	bins  map[string]string
}

// ClusterOptions tune StartCluster; the zero value is Patroni's defaults (TTL 30 s, loop_wait
// 10 s, retry_timeout 10 s) with synchronous_mode on.
type ClusterOptions struct {
	Nodes int // default 2
}

// StartCluster starts etcd and a Patroni cluster of o.Nodes nodes with synchronous_mode on,
// and waits until the first node is the primary and another is its synchronous standby.
func StartCluster(t testing.TB, o ClusterOptions) *Cluster {
	t.Helper()
	if o.Nodes == 0 {
		o.Nodes = 2
	}
	bins := Require(t, "patroni", "patronictl", "etcd", "haproxy", "pg_ctl", "initdb", "pg_basebackup")
	dir, err := os.MkdirTemp("", "neemias-ha")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Scope: "neemias", dir: dir, cred: postgresUser(t), bins: bins}
	c.chown(dir)
	_ = os.Chmod(dir, 0o755)
	c.Etcd = StartEtcd(t, dir)
	ports := Ports(t, 2*o.Nodes)
	for i := range o.Nodes {
		n := &Node{Name: fmt.Sprintf("pg%d", i+1), PGPort: ports[2*i], RESTPort: ports[2*i+1], cluster: c}
		n.Dir = filepath.Join(dir, n.Name)
		n.Config = filepath.Join(n.Dir, "patroni.yml")
		if err := os.MkdirAll(n.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		c.chown(n.Dir)
		if err := os.WriteFile(n.Config, []byte(c.patroniConfig(n)), 0o644); err != nil {
			t.Fatal(err)
		}
		c.Nodes = append(c.Nodes, n)
	}
	t.Cleanup(func() {
		// Stop every Patroni (which stops its PostgreSQL), then any PostgreSQL left behind
		// by a node the test killed; etcd's cleanup runs after this one.
		var wg sync.WaitGroup
		for _, n := range c.Nodes {
			wg.Go(func() {
				if n.proc != nil {
					n.proc.Stop(syscall.SIGTERM, 30*time.Second)
				}
				n.killPostgres()
			})
		}
		wg.Wait()
		if t.Failed() {
			for _, n := range c.Nodes {
				if n.proc != nil {
					t.Logf("patroni %s output:\n%s", n.Name, LastLines(n.proc.Out.String(), 30))
				}
			}
		}
		os.RemoveAll(dir)
	})
	// The first node bootstraps alone, so it is the primary; the others then join.
	c.Nodes[0].start(t)
	waitFor(t, 90*time.Second, "the first node to lead", func() error { return c.Nodes[0].rest("/primary") }, c.Nodes[0].proc)
	for _, n := range c.Nodes[1:] {
		n.start(t)
	}
	for _, n := range c.Nodes[1:] {
		waitFor(t, 120*time.Second, n.Name+" to stream", func() error { return n.rest("/replica") }, n.proc)
	}
	c.WaitSync(t, c.Nodes[0], 60*time.Second)
	return c
}

func (c *Cluster) chown(p string) {
	if c.cred != nil {
		_ = os.Chown(p, int(c.cred.Uid), int(c.cred.Gid))
	}
}

// patroniConfig is the node's patroni.yml: Patroni's default timings, synchronous_mode, trust
// on loopback (the test's cluster is reachable only from 127.0.0.1).
func (c *Cluster) patroniConfig(n *Node) string {
	return fmt.Sprintf(`scope: %[1]s
name: %[2]s
log:
  level: INFO
restapi:
  listen: 127.0.0.1:%[3]d
  connect_address: 127.0.0.1:%[3]d
etcd3:
  hosts: %[4]s
bootstrap:
  dcs:
    ttl: 30
    loop_wait: 10
    retry_timeout: 10
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        max_connections: 200
        synchronous_commit: "on"
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - no-sync
postgresql:
  listen: 127.0.0.1:%[5]d
  connect_address: 127.0.0.1:%[5]d
  data_dir: %[6]s/data
  bin_dir: %[7]s
  pgpass: %[6]s/pgpass
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
  parameters:
    unix_socket_directories: %[6]s
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
`, c.Scope, n.Name, n.RESTPort, c.Etcd.Endpoint, n.PGPort, n.Dir, filepath.Dir(c.bins["pg_ctl"]))
}

func (n *Node) start(t testing.TB) {
	t.Helper()
	n.proc = Start(t, "patroni "+n.Name, n.cluster.cred, n.cluster.bins["patroni"], n.Config)
}

// Restart starts the node's Patroni again after KillNode: it rejoins as a replica.
func (n *Node) Restart(t testing.TB) {
	t.Helper()
	if n.proc != nil && !n.proc.Exited() {
		t.Fatalf("%s is still running", n.Name)
	}
	n.start(t)
}

// REST is the base URL of the node's Patroni REST API.
func (n *Node) REST() string { return fmt.Sprintf("http://127.0.0.1:%d", n.RESTPort) }

var restClient = &http.Client{Timeout: 2 * time.Second}

// rest returns nil when GET path on the node's REST API answers 200.
func (n *Node) rest(path string) error {
	resp, err := restClient.Get(n.REST() + path)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d", n.Name, path, resp.StatusCode)
	}
	return nil
}

// IsPrimary reports whether the node's Patroni answers 200 on /primary (what HAProxy checks).
func (n *Node) IsPrimary() bool { return n.rest("/primary") == nil }

// URL is a direct connection URL to database db on the node.
func (n *Node) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=2", n.PGPort, db)
}

// Writable reports whether the node's PostgreSQL answers and is not in recovery, and whether
// the answer is known: a probe that timed out (a loaded machine, a node busy shutting down)
// tells nothing either way, while a refused connection or a node in recovery is a definite
// "not writable". The test decides when no node accepted writes from known answers only.
func (n *Node) Writable(ctx context.Context) (writable, known bool) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.URL("postgres"))
	if err != nil {
		return false, ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) && !timedOut(err)
	}
	defer conn.Close(context.Background())
	var recovery bool
	if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&recovery); err != nil {
		return false, ctx.Err() == nil && !timedOut(err)
	}
	return !recovery, true
}

// timedOut reports whether err is a timeout (net.Error), which says nothing about the node.
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Primary is the node whose Patroni says it is the primary; it fails the test after timeout.
func (c *Cluster) Primary(t testing.TB, timeout time.Duration) *Node {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, n := range c.Nodes {
			if n.IsPrimary() {
				return n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no primary within %s", timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Other is a node other than n.
func (c *Cluster) Other(n *Node) *Node {
	for _, o := range c.Nodes {
		if o != n {
			return o
		}
	}
	return nil
}

// WaitSync waits until another node is primary's synchronous standby, in Patroni's view
// (GET /sync answers 200: only such a node may be switched over to or promoted) and in
// primary's pg_stat_replication.
func (c *Cluster) WaitSync(t testing.TB, primary *Node, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, "a synchronous standby of "+primary.Name, func() error {
		sync := false
		for _, n := range c.Nodes {
			if n != primary && n.rest("/sync") == nil {
				sync = true
			}
		}
		if !sync {
			return errors.New("Patroni names no synchronous standby yet")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, primary.URL("postgres"))
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync' AND state = 'streaming'").Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return errors.New("no synchronous standby yet")
		}
		return nil
	}, nil)
}

// KillNode is the primary's machine dying: SIGKILL to the node's Patroni and then to its
// postmaster and every PostgreSQL process under it, by process id. (Killing PostgreSQL alone
// is not a failover: the node's Patroni, still holding the leader key, restarts it in place.)
// It returns when the processes are gone.
func (n *Node) KillNode(t testing.TB) {
	t.Helper()
	pids := n.postgresPIDs()
	if n.proc != nil && !n.proc.Exited() {
		_ = n.proc.Cmd.Process.Kill()
	}
	killAndWait(pids)
	if n.proc != nil {
		n.proc.Kill() // reaps it
	}
}

// killPostgres SIGKILLs the node's postmaster and its children, if running.
func (n *Node) killPostgres() { killAndWait(n.postgresPIDs()) }

// postgresPIDs are the node's postmaster and its children, if running.
func (n *Node) postgresPIDs() []int {
	b, err := os.ReadFile(filepath.Join(n.Dir, "data", "postmaster.pid"))
	if err != nil {
		return nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil || pid <= 1 || !isPostgres(pid) {
		return nil
	}
	return append([]int{pid}, children(pid)...)
}

// killAndWait SIGKILLs every process of pids, then waits until they are gone.
func killAndWait(pids []int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range pids {
		for alive(p) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// isPostgres reports whether pid is a postgres process (not a reused id).
func isPostgres(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "postgres")
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// children lists the ids of the processes whose parent is pid.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 {
			if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
				out = append(out, p)
			}
		}
	}
	return out
}

// Switchover asks Patroni (patronictl) to hand the primary role from leader to candidate.
func (c *Cluster) Switchover(t testing.TB, leader, candidate *Node) {
	t.Helper()
	cmd := exec.Command(c.bins["patronictl"], "-c", leader.Config, "switchover", "--leader", leader.Name, "--candidate", candidate.Name, "--force")
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "LANG=C.UTF-8")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Successfully switched over") {
		t.Fatalf("patronictl switchover: %v\n%s", err, out)
	}
}

// List is `patronictl list`, for the log.
func (c *Cluster) List() string {
	cmd := exec.Command(c.bins["patronictl"], "-c", c.Nodes[0].Config, "list")
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "LANG=C.UTF-8")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// Members is Patroni's view of the cluster (GET /cluster on any node that answers).
func (c *Cluster) Members() []map[string]any {
	for _, n := range c.Nodes {
		resp, err := restClient.Get(n.REST() + "/cluster")
		if err != nil {
			continue
		}
		var body struct {
			Members []map[string]any `json:"members"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err == nil {
			return body.Members
		}
	}
	return nil
}

// HAProxy routes TCP connections to the node whose Patroni REST API answers 200 on /primary,
// the configuration Patroni documents: a replica or a node that stopped answering gets no new
// connection, and the connections it had are cut (on-marked-down shutdown-sessions), so no
// client stays on a demoted primary.
type HAProxy struct {
	Port int
	proc *Proc
}

// StartHAProxy starts HAProxy in front of c's nodes; checks run every 500 ms (Patroni's
// template says 3 s; the test wants the cut and the return within a second).
func StartHAProxy(t testing.TB, c *Cluster) *HAProxy {
	t.Helper()
	bin := Require(t, "haproxy")["haproxy"]
	port := Ports(t, 1)[0]
	var servers strings.Builder
	for _, n := range c.Nodes {
		fmt.Fprintf(&servers, "  server %s 127.0.0.1:%d maxconn 200 check port %d\n", n.Name, n.PGPort, n.RESTPort)
	}
	cfg := fmt.Sprintf(`global
  maxconn 1000
defaults
  mode tcp
  retries 0
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 1s
listen primary
  bind 127.0.0.1:%d
  option httpchk OPTIONS /primary
  http-check expect status 200
  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
%s`, port, servers.String())
	path := filepath.Join(c.dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &HAProxy{Port: port, proc: Start(t, "haproxy", nil, bin, "-db", "-f", path)}
	t.Cleanup(func() {
		h.proc.Stop(syscall.SIGTERM, 10*time.Second)
		if t.Failed() {
			t.Logf("haproxy output:\n%s", LastLines(h.proc.Out.String(), 20))
		}
	})
	// HAProxy starts with every server up until its checks say otherwise: wait until
	// consecutive connections all reach the primary.
	good := 0
	waitFor(t, 30*time.Second, "haproxy to route to the primary only", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, h.URL("postgres"))
		if err != nil {
			good = 0
			return err
		}
		defer conn.Close(ctx)
		var recovery bool
		if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&recovery); err != nil || recovery {
			good = 0
			return fmt.Errorf("reached a standby (%v)", err)
		}
		if good++; good < 2*len(c.Nodes)+2 {
			return errors.New("not yet sure")
		}
		return nil
	}, h.proc)
	return h
}

// URL is the URL of database db through HAProxy.
func (h *HAProxy) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=2", h.Port, db)
}

// waitFor polls check every 100 ms until it returns nil; it fails the test after timeout or
// when proc exits.
func waitFor(t testing.TB, timeout time.Duration, what string, check func() error, proc *Proc) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if proc != nil && proc.Exited() {
			t.Fatalf("waiting for %s: %s exited (%v):\n%s", what, proc.Name, proc.err, LastLines(proc.Out.String(), 30))
		}
		if time.Now().After(deadline) {
			out := ""
			if proc != nil {
				out = LastLines(proc.Out.String(), 30)
			}
			t.Fatalf("waiting for %s: %v after %s\n%s", what, err, timeout, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// LastLines is the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// BuildServer builds the neemias-mcp binary into dir (go build, so the build cache makes a
// second build cheap) and returns its path.
func BuildServer(t testing.TB, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "neemias-mcp")
	cmd := exec.Command("go", "build", "-o", out, "github.com/neemias/neemias-mcp/cmd/neemias-mcp")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}
