package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// The helpers of the scale-out tests (scaleout_test.go): replicas as OS processes, a
// round-robin reverse proxy that follows their readiness like a Kubernetes Service, PgBouncer,
// and a private PostgreSQL cluster the test may stop and start.

// replica is one `neemias-mcp serve` process.
type replica struct {
	addr string
	cmd  *exec.Cmd
	out  *testsupport.Buffer
	done chan struct{}
	err  error // Wait's, once done is closed
}

// spawnReplica starts serve on addr with args; the process is interrupted when the test ends.
func spawnReplica(t *testing.T, addr string, args ...string) *replica {
	t.Helper()
	args = append([]string{"serve", "--addr", addr}, args...)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(args, "\x1f"))
	r := &replica{addr: addr, cmd: cmd, out: &testsupport.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = r.out, r.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.err = cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		r.signal(os.Interrupt)
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-r.done
		}
		if t.Failed() {
			t.Logf("replica %s output:\n%s", addr, lastLines(r.out.String(), 40))
		}
	})
	return r
}

func (r *replica) signal(s os.Signal) {
	select {
	case <-r.done:
	default:
		_ = r.cmd.Process.Signal(s)
	}
}

func (r *replica) base() string { return "http://" + r.addr }

// waitHealthy waits until the replica answers /healthz.
func (r *replica) waitHealthy(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(r.base() + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-r.done:
			t.Fatalf("replica %s exited: %v\n%s", r.addr, r.err, r.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s did not come up:\n%s", r.addr, r.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proxy is a round-robin reverse proxy over the replicas that sends requests only to those
// whose /readyz answered 200 at the last poll (every 50 ms), like a Service in front of pods.
type proxy struct {
	URL      string
	backends []*url.URL
	ready    []atomic.Bool
	next     atomic.Uint64
	// Failed counts the requests the proxy could not deliver (502s).
	Failed atomic.Int64
}

// startProxy serves the proxy on ln until the test ends.
func startProxy(t *testing.T, ln net.Listener, backends []string) *proxy {
	t.Helper()
	p := &proxy{URL: "http://" + ln.Addr().String(), ready: make([]atomic.Bool, len(backends))}
	for i, b := range backends {
		u, _ := url.Parse(b)
		p.backends = append(p.backends, u)
		p.ready[i].Store(true)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(p.pick())
			pr.Out.Host = pr.In.Host // the public host, as a real balancer forwards it
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.Failed.Add(1)
			t.Logf("proxy: %s %s: %v", r.Method, r.URL.Path, err)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	hs := &http.Server{Handler: rp}
	go func() { _ = hs.Serve(ln) }()
	ctx, cancel := context.WithCancel(context.Background())
	go p.poll(ctx)
	t.Cleanup(func() { cancel(); _ = hs.Close() })
	return p
}

func (p *proxy) pick() *url.URL {
	n := uint64(len(p.backends))
	start := p.next.Add(1)
	for i := range n {
		j := (start + i) % n
		if p.ready[j].Load() {
			return p.backends[j]
		}
	}
	return p.backends[start%n]
}

func (p *proxy) poll(ctx context.Context) {
	c := &http.Client{Timeout: time.Second}
	for ctx.Err() == nil {
		for i, b := range p.backends {
			resp, err := c.Get(b.String() + "/readyz")
			ok := err == nil && resp.StatusCode == http.StatusOK
			if err == nil {
				resp.Body.Close()
			}
			p.ready[i].Store(ok)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cluster is n replicas on dbURL behind a proxy; the public URL is the proxy's.
type cluster struct {
	proxy    *proxy
	replicas []*replica
}

func startCluster(t *testing.T, dbURL string, n int, extra ...string) *cluster {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{}
	var bases []string
	for _, addr := range freePorts(t, n) {
		args := append([]string{"--public-url", "http://" + ln.Addr().String(), "--database-url", dbURL}, extra...)
		c.replicas = append(c.replicas, spawnReplica(t, addr, args...))
		bases = append(bases, "http://"+addr)
	}
	for _, r := range c.replicas {
		r.waitHealthy(t)
	}
	c.proxy = startProxy(t, ln, bases)
	return c
}

// grantThrough runs the OAuth code flow through base (every step load-balanced) and returns
// the tokens.
func grantThrough(t *testing.T, base, email, scope string) (oauthtest.Client, oauthtest.TokenResponse) {
	t.Helper()
	c := oauthtest.RegisterPublic(t, base, "http://127.0.0.1:3000/cb")
	verifier, challenge := oauthtest.NewPKCE()
	f := oauthtest.NewBrowser(t).Authorize(oauthtest.Request{
		ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: scope, State: "s", Challenge: challenge,
	}, oauthtest.Bases{Authorize: base, Login: base, Consent: base}, email, seed.DemoPassword, "approve")
	code := f.Callback.Query().Get("code")
	if code == "" {
		t.Fatalf("no code: %s", f.Final.Location)
	}
	tok := oauthtest.Exchange(t, base, c, code, verifier)
	if tok.Status != http.StatusOK {
		t.Fatalf("code exchange: %+v", tok)
	}
	return c, tok
}

// rpcResult is what a tools/call answered, for the load tests.
type rpcResult struct {
	Status     int
	RetryAfter string
	IsError    bool
	CheckinID  string
	Text       string
	Elapsed    time.Duration
	Err        error // transport error
}

// mcpClient has enough connections for the load tests.
var mcpClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// checkin registers the child's check-in through base.
func checkin(base, token string, child uuid.UUID) rpcResult {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": child.String()}}})
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	start := time.Now()
	resp, err := mcpClient.Do(req)
	if err != nil {
		return rpcResult{Err: err, Elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := rpcResult{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Text: string(b), Elapsed: time.Since(start)}
	var out struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				CheckinID string `json:"checkin_id"`
			} `json:"structuredContent"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	payload := b
	for _, line := range strings.Split(string(b), "\n") { // an SSE response: its data line
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			payload = []byte(d)
		}
	}
	if json.Unmarshal(payload, &out) == nil {
		r.IsError = out.Result.IsError || out.Error != nil
		r.CheckinID = out.Result.StructuredContent.CheckinID
	}
	return r
}

// ok is a check-in the client saw succeed.
func (r rpcResult) ok() bool {
	return r.Err == nil && r.Status == http.StatusOK && !r.IsError && r.CheckinID != ""
}

// retryable is a clear, retryable refusal: 503 or 429 with Retry-After, or the tool error
// that says the database did not answer (a request whose connection was cut mid-way).
func (r rpcResult) retryable() bool {
	if r.Err != nil {
		return false
	}
	if (r.Status == http.StatusServiceUnavailable || r.Status == http.StatusTooManyRequests) && r.RetryAfter != "" {
		return true
	}
	return r.Status == http.StatusOK && r.IsError && strings.Contains(r.Text, "temporarily unavailable")
}

// demoChildren are n children of the demo church.
func demoChildren(t *testing.T, pool *pgxpool.Pool, n int) []uuid.UUID {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT id FROM children WHERE church_id = $1 ORDER BY id LIMIT $2`, seed.DemoChurchID, n)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	if len(out) < n {
		t.Fatalf("%d demo children, want %d", len(out), n)
	}
	return out
}

// pgBouncer starts Debian's pgbouncer in transaction pooling mode in front of the server of
// dbURL and returns dbURL through it. It installs the package when it is missing and apt-get
// can (as `make test-deps` does for chromium), and skips the test only when neither works.
//
// PgBouncer before 1.21 does not track protocol-level prepared statements, so pgx's default
// statement cache (named prepared statements) cannot be used through it in transaction mode;
// the URL then asks pgx for default_query_exec_mode=cache_describe (unnamed prepared
// statements, still one round trip per query). From 1.21 on, max_prepared_statements lets the
// default cache through unchanged. settings are further pgbouncer.ini lines.
func pgBouncer(t *testing.T, dbURL string, settings ...string) string {
	t.Helper()
	bin := findPgBouncer()
	if bin == "" {
		if _, err := exec.LookPath("apt-get"); err != nil {
			t.Skip("pgbouncer is not installed and apt-get is unavailable: install PgBouncer (Debian: apt-get install pgbouncer) to run this test")
		}
		var prefix []string
		if os.Geteuid() != 0 {
			prefix = []string{"sudo", "-n"}
		}
		run := func(args ...string) error {
			all := append(append([]string{}, prefix...), args...)
			c := exec.Command(all[0], all[1:]...)
			c.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			out, err := c.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v: %w\n%s", args, err, lastLines(string(out), 10))
			}
			return nil
		}
		t.Log("installing pgbouncer (Debian package)")
		if err := run("apt-get", "install", "-y", "-qq", "pgbouncer"); err != nil {
			if err := run("apt-get", "update", "-qq"); err != nil {
				t.Skipf("pgbouncer is not installed and apt-get could not install it: %v", err)
			}
			if err := run("apt-get", "install", "-y", "-qq", "pgbouncer"); err != nil {
				t.Skipf("pgbouncer is not installed and apt-get could not install it: %v", err)
			}
		}
		if bin = findPgBouncer(); bin == "" {
			t.Fatal("pgbouncer installed but not found")
		}
	}
	out, _ := exec.Command(bin, "-V").CombinedOutput()
	major, minor := pgBouncerVersion(string(out))
	modern := major > 1 || major == 1 && minor >= 21
	t.Logf("%s (protocol-level prepared statements: %v)", strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]), modern)

	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "pgbouncer")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	port := strings.TrimPrefix(freePorts(t, 1)[0], "127.0.0.1:")
	cfg := fmt.Sprintf(`[databases]
* = host=%s port=%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %s
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 10
ignore_startup_parameters = extra_float_digits
logfile = %s
`, u.Hostname(), u.Port(), port, filepath.Join(dir, "users.txt"), filepath.Join(dir, "pgbouncer.log"))
	if modern {
		cfg += "max_prepared_statements = 200\n"
	}
	for _, line := range settings {
		cfg += line + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte(`"postgres" ""`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	if os.Geteuid() == 0 { // pgbouncer refuses to run as root
		if pg, err := user.Lookup("postgres"); err == nil {
			uid, _ := strconv.Atoi(pg.Uid)
			gid, _ := strconv.Atoi(pg.Gid)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
			_ = os.Chown(dir, uid, gid)
		}
		_ = os.Chmod(dir, 0o755)
	}
	var logs testsupport.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Logf("pgbouncer log:\n%s%s", lastLines(string(b), 30), logs.String())
		}
	})
	through := *u
	through.Host = "127.0.0.1:" + port
	if !modern {
		q := through.Query()
		q.Set("default_query_exec_mode", "cache_describe")
		through.RawQuery = q.Encode()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", through.Host)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncer did not listen: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return through.String()
}

func findPgBouncer() string {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// pgBouncerVersion parses "PgBouncer 1.18.0 ...".
func pgBouncerVersion(s string) (major, minor int) {
	f := strings.Fields(s)
	for i, w := range f {
		if strings.EqualFold(w, "pgbouncer") && i+1 < len(f) {
			parts := strings.Split(f[i+1], ".")
			if len(parts) >= 2 {
				major, _ = strconv.Atoi(parts[0])
				minor, _ = strconv.Atoi(parts[1])
			}
			return major, minor
		}
	}
	return 0, 0
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// privateCluster is a PostgreSQL cluster of the test's own (Debian's binaries), which the
// test may stop and start on the same port.
type privateCluster struct {
	dir, bin, port string
	cred           *syscall.Credential
}

func newPrivateCluster(t *testing.T) *privateCluster {
	t.Helper()
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(matches) == 0 {
		t.Skip("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin): install Debian's postgresql to run this test")
	}
	dir, err := os.MkdirTemp("", "neemias-pg")
	if err != nil {
		t.Fatal(err)
	}
	c := &privateCluster{dir: dir, bin: filepath.Dir(matches[len(matches)-1]), port: strings.TrimPrefix(freePorts(t, 1)[0], "127.0.0.1:")}
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root without a postgres user to run the cluster as")
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		_ = os.Chown(dir, uid, gid)
	}
	if out, err := c.cmd("initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	c.start(t)
	t.Cleanup(func() {
		_, _ = c.cmd("pg_ctl", "-D", filepath.Join(dir, "data"), "-m", "immediate", "-w", "stop").CombinedOutput()
		os.RemoveAll(dir)
	})
	return c
}

func (c *privateCluster) cmd(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd
}

// URL is the admin URL of database name.
func (c *privateCluster) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%s/%s?sslmode=disable", c.port, name)
}

func (c *privateCluster) start(t *testing.T) {
	t.Helper()
	data := filepath.Join(c.dir, "data")
	out, err := c.cmd("pg_ctl", "-D", data, "-l", filepath.Join(c.dir, "server.log"), "-w", "-t", "60", "start",
		"-o", fmt.Sprintf("-p %s -h 127.0.0.1 -k %s -c fsync=off -c max_connections=200", c.port, c.dir)).CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, lastLines(string(log), 20))
	}
}

// stop shuts the cluster down in fast mode: sessions are terminated, in-flight transactions
// roll back.
func (c *privateCluster) stop(t *testing.T) {
	t.Helper()
	if out, err := c.cmd("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w", "stop").CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}
