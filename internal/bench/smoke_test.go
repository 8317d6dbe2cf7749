package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestSmoke runs the whole bench briefly (every target and operation for 100 ms, cost growth
// 1× and 2×) against a database of its own: it proves the set-up, the requests and the checks
// still fit the server, in about ten seconds. Skipped with -short and without PostgreSQL.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server and the bench (about 10 s)")
	}
	admin := os.Getenv("DATABASE_URL")
	if admin == "" {
		admin = DefaultAdminURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Skipf("PostgreSQL unreachable (set DATABASE_URL): %v", err)
	}
	name := fmt.Sprintf("neemias_bench_smoke_%d", os.Getpid())
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		conn.Close(context.Background())
	})
	module, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		AdminURL: admin, Database: name, ModuleDir: module, WorkDir: t.TempDir(),
		Clients: 2, Warmup: 0, Duration: 100 * time.Millisecond, Rounds: 1,
		Targets: AllTargets, Ops: AllOps,
		Scales: []int{1, 2}, ScaleTargets: []string{TargetMCP2026}, ScaleDuration: 100 * time.Millisecond, ScaleRounds: 1,
		Log: testWriter{t},
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(AllTargets)*len(AllOps) - 6; len(res.Cells) != want { // tools/list and the read tool: MCP only
		t.Errorf("%d cells, want %d", len(res.Cells), want)
	}
	for _, c := range res.Cells {
		if c.Errors > 0 || c.Requests == 0 {
			t.Errorf("%s %s: %d requests, %d errors", c.Target, c.Op, c.Requests, c.Errors)
		}
	}
	if res.ReadyMS <= 0 || res.PeakRSSMB <= 0 {
		t.Errorf("ready %v ms, peak RSS %v MB", res.ReadyMS, res.PeakRSSMB)
	}
	if len(res.Scale) != 2 || res.Scale[1].Plans[OpCheckins] == "" {
		t.Errorf("cost growth: %d scales, plan %q", len(res.Scale), res.Scale[len(res.Scale)-1].Plans[OpCheckins])
	}
	if len(res.Goals) != 17 { // issue 8's and 21's 8, issue 23's 9
		t.Errorf("%d goals, want 17", len(res.Goals))
	}
	// The seed's questions were measured for both roles (the budgets are TestToolOutputBudget's).
	roles := map[string]int{}
	for _, c := range res.ToolCosts {
		roles[c.Role]++
		if c.TextChars == 0 || c.StructuredChars == 0 {
			t.Errorf("tool cost %+v: an empty answer", c)
		}
	}
	if roles["ADMIN"] != 6 || roles["VOLUNTARIO"] != 5 {
		t.Errorf("tool costs per role %v, want ADMIN 6, VOLUNTARIO 5", roles)
	}
	var report strings.Builder
	PrintReport(&report, res)
	t.Log(report.String())
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
