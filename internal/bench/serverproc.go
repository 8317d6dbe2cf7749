package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/neemias/neemias-mcp/internal/freeport"
	"github.com/neemias/neemias-mcp/internal/seed"
)

// ServerProc is the real server, built from this module and run as a subprocess, as it runs
// in production: its own process, so its memory and start-up are its own.
type ServerProc struct {
	Binary  string
	BaseURL string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited
	// ReadyIn is from process start to the first 200 from /healthz.
	ReadyIn time.Duration
	LogPath string
}

// BuildServer compiles ./cmd/neemias-mcp of the module in moduleDir into dir.
func BuildServer(ctx context.Context, moduleDir, dir string) (string, error) {
	bin := filepath.Join(dir, "neemias-mcp")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/neemias-mcp")
	cmd.Dir = moduleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("bench: go build ./cmd/neemias-mcp: %w\n%s", err, out)
	}
	return bin, nil
}

// StartServer runs `serve` on a free port with the rate limit off, logging to dir, and waits
// for /healthz to answer 200.
func StartServer(ctx context.Context, bin, dbURL, dir string) (*ServerProc, error) {
	port, err := freeport.Port()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p := &ServerProc{Binary: bin, BaseURL: "http://" + addr, LogPath: filepath.Join(dir, "server.log")}
	logf, err := os.Create(p.LogPath)
	if err != nil {
		return nil, fmt.Errorf("bench: server log: %w", err)
	}
	// No rate limit (the load is the point), and a check-in window wide enough for the
	// check-in cycle's 40 most recent days without a service (fixture.go).
	p.cmd = exec.Command(bin, "serve", "--database-url", dbURL, "--addr", addr, "--rate-limit", "0", "--checkin-window-days", "120")
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	start := time.Now()
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("bench: start server: %w", err)
	}
	p.exited = make(chan struct{})
	go func() { _ = p.cmd.Wait(); logf.Close(); close(p.exited) }()
	if err := p.waitReady(ctx, start); err != nil {
		p.Stop()
		return nil, fmt.Errorf("%w (log: %s)", err, p.LogPath)
	}
	return p, nil
}

func (p *ServerProc) waitReady(ctx context.Context, start time.Time) error {
	client := &http.Client{Timeout: time.Second}
	deadline := start.Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return errors.New("bench: the server exited before it was ready")
		default:
		}
		resp, err := client.Get(p.BaseURL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				p.ReadyIn = time.Since(start)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return errors.New("bench: the server was not ready within 30 s")
}

// Token mints an access token for the demo ADMIN with `neemias-mcp token`, for this server's
// public URL (the issuer and audience the server checks).
func (p *ServerProc) Token(ctx context.Context, dbURL string) (string, error) {
	return p.TokenFor(ctx, dbURL, seed.DemoAdminEmail)
}

// TokenFor is Token for the demo user of email, with every scope of their role.
func (p *ServerProc) TokenFor(ctx context.Context, dbURL, email string) (string, error) {
	cmd := exec.CommandContext(ctx, p.Binary, "token", "--database-url", dbURL, "--public-url", p.BaseURL,
		"--email", email, "--ttl", "6h")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("bench: neemias-mcp token: %w: %s", err, stderr.String())
	}
	tok := strings.TrimSpace(string(out))
	if tok == "" || strings.ContainsAny(tok, " \n") {
		return "", fmt.Errorf("bench: neemias-mcp token printed %q, not one token", out)
	}
	return tok, nil
}

// PeakRSSMB is the process's peak resident set (VmHWM) in MB (2^20 bytes).
func (p *ServerProc) PeakRSSMB() (float64, error) {
	return peakRSS(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
}

func peakRSS(statusPath string) (float64, error) {
	b, err := os.ReadFile(statusPath)
	if err != nil {
		return 0, fmt.Errorf("bench: peak RSS: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("bench: peak RSS: %q: %w", rest, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("bench: peak RSS: no VmHWM line")
}

// CPUTime is the CPU time (user + system) the server process has used so far, from
// /proc/<pid>/stat (clock ticks of 10 ms: over a 2 s measurement of a busy server, well under
// 1% of the figure).
func (p *ServerProc) CPUTime() (time.Duration, error) {
	return processCPU(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
}

// clockTicks is USER_HZ, which Linux fixes at 100 for /proc on every architecture Go runs on.
const clockTicks = 100

func processCPU(statPath string) (time.Duration, error) {
	b, err := os.ReadFile(statPath)
	if err != nil {
		return 0, fmt.Errorf("bench: server CPU: %w", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: count from its end.
	i := bytes.LastIndexByte(b, ')')
	fields := strings.Fields(string(b[i+1:]))
	if i < 0 || len(fields) < 13 {
		return 0, fmt.Errorf("bench: server CPU: unexpected %s", statPath)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime and stime, fields 14 and 15 of stat(5)
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bench: server CPU: %q: %w", f, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// Stop ends the server with SIGTERM (it shuts down gracefully), then SIGKILL after 10 s.
func (p *ServerProc) Stop() {
	if p.exited == nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}
