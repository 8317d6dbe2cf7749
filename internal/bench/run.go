package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Config is one bench run.
type Config struct {
	AdminURL  string // admin connection (the bench database is created next to it)
	Database  string // name of the bench database, dropped and recreated
	ModuleDir string // where ./cmd/neemias-mcp is built from
	WorkDir   string // server binary and log
	Clients   int
	Warmup    time.Duration
	Duration  time.Duration
	Rounds    int
	Targets   []string
	Ops       []string
	// Scales, when not empty, runs the cost-growth mode after the main run (or alone with
	// SkipMain): seed to each scale in turn, ANALYZE, measure ScaleTargets on the reads and
	// the check-in for ScaleDuration each, ScaleRounds rounds, with EXPLAIN plans.
	Scales        []int
	ScaleTargets  []string
	ScaleDuration time.Duration
	ScaleRounds   int
	SkipMain      bool
	Log           io.Writer // progress lines
}

// Results is everything a run measured; it is what the JSON file holds.
type Results struct {
	Started    time.Time `json:"started"`
	GoVersion  string    `json:"go_version"`
	Commit     string    `json:"commit"`
	CPUs       int       `json:"cpus"`
	Clients    int       `json:"clients"`
	Warmup     string    `json:"warmup"`
	Duration   string    `json:"duration"`
	Rounds     int       `json:"rounds"`
	Fixture    *Fixture  `json:"fixture"`
	FreshPairs int       `json:"fresh_checkins_per_run"`
	ReadyMS    float64   `json:"start_to_ready_ms"`
	PeakRSSMB  float64   `json:"peak_rss_mb"` // after the main run
	Cells      []Cell    `json:"cells"`
	// ToolsListSequential is tools/list over MCP 2026-07-28 by one client, one request at a
	// time: the latency of a list with nothing queued before it (issue 23's p50 goal).
	ToolsListSequential *Stats        `json:"tools_list_sequential,omitempty"`
	Scale               []ScaleResult `json:"scale,omitempty"`
	// PeakRSSAfterScaleMB is the server's peak after the cost-growth mode too.
	PeakRSSAfterScaleMB float64 `json:"peak_rss_after_scale_mb,omitempty"`
	// SigningKeyMS is the making of the database's first signing key, before the server
	// starts (Database.SigningKeyIn): a new database's first start pays it on top of ReadyMS.
	SigningKeyMS float64 `json:"signing_key_ms"`
	// ToolCosts are what the seed's questions cost the model, per role (toolcost.go).
	ToolCosts []ToolCost `json:"tool_costs"`
	Goals     []Goal     `json:"goals"`
	// Notes say how to read figures that need it (the check-in's cycle, errors).
	Notes []string `json:"notes,omitempty"`
}

// ScaleResult is the cost-growth figures at one scale.
type ScaleResult struct {
	Scale       int               `json:"scale"`
	SeedSeconds float64           `json:"seed_and_analyze_s"`
	Checkins    int64             `json:"checkins_rows"`
	Cells       []Cell            `json:"cells"`
	Plans       map[string]string `json:"plans"`
}

func (s ScaleResult) stats(target, op string) (Stats, bool) {
	for _, c := range s.Cells {
		if c.Target == target && c.Op == op {
			return c.Stats, c.Requests > 0
		}
	}
	return Stats{}, false
}

// env is what the targets need while a run lasts.
type env struct {
	cfg    Config
	db     *Database
	fix    *Fixture
	client *Client
	server *ServerProc
}

// Run sets everything up, measures, and returns the results; the caller prints and saves them.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	logf := func(format string, a ...any) { fmt.Fprintf(cfg.Log, format+"\n", a...) }
	res := &Results{Started: time.Now().UTC(), GoVersion: runtime.Version(), Commit: gitCommit(cfg.ModuleDir),
		CPUs: runtime.NumCPU(), Clients: cfg.Clients, Warmup: cfg.Warmup.String(), Duration: cfg.Duration.String(), Rounds: cfg.Rounds,
		ReadyMS: -1, PeakRSSMB: -1}
	first := 1
	if cfg.SkipMain && len(cfg.Scales) > 0 {
		first = cfg.Scales[0]
	}
	release, err := LockRun(ctx, cfg.AdminURL, cfg.Database, logf)
	if err != nil {
		return nil, err
	}
	defer release()
	logf("database %s: create, migrate, seed %d×, ANALYZE", cfg.Database, first)
	d, err := CreateDatabase(ctx, cfg.AdminURL, cfg.Database, first)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	res.SigningKeyMS = ms(d.SigningKeyIn)
	logf("signing key (RSA-2048) made in %.0f ms: a new database's first start makes it; start to ready is a start that finds it, as every restart", res.SigningKeyMS)
	fix, err := LoadFixture(ctx, d)
	if err != nil {
		return nil, err
	}
	res.Fixture, res.FreshPairs = fix, fix.FreshCheckins()
	logf("fixture: busiest day %s (%d check-ins), child %s, month %s..%s, %d fresh check-ins per run",
		fix.BusiestDay.Format(time.DateOnly), fix.BusiestCount, fix.Child, fix.MonthFrom.Format(time.DateOnly),
		fix.MonthTo.Format(time.DateOnly), fix.FreshCheckins())

	logf("building ./cmd/neemias-mcp")
	bin, err := BuildServer(ctx, cfg.ModuleDir, cfg.WorkDir)
	if err != nil {
		return nil, err
	}
	srv, err := StartServer(ctx, bin, d.URL, cfg.WorkDir)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	res.ReadyMS = ms(srv.ReadyIn)
	logf("server %s ready in %.0f ms (log %s)", srv.BaseURL, res.ReadyMS, srv.LogPath)
	tok, err := srv.Token(ctx, d.URL)
	if err != nil {
		return nil, err
	}

	// The floors get the server's connection settings (store.ConfigurePool), so the
	// comparison is of everything but the connection.
	floorCfg, err := pgxpool.ParseConfig(d.URL)
	if err != nil {
		return nil, fmt.Errorf("bench: floor pool: %w", err)
	}
	store.ConfigurePool(floorCfg)
	// The generated queries require the caller's scope (rf_has_scope reads app.scopes, which
	// the server sets per transaction in its BEGIN message). The floors have no caller: the
	// ADMIN's scopes go in once per connection, as a startup parameter, so the floor's
	// requests keep their round trips.
	adminScopes, _ := scopes.RoleScopes("ADMIN")
	floorCfg.ConnConfig.RuntimeParams["app.scopes"] = adminScopes.String()
	floorPool, err := pgxpool.NewWithConfig(ctx, floorCfg)
	if err != nil {
		return nil, fmt.Errorf("bench: floor pool: %w", err)
	}
	defer floorPool.Close()
	floorCtx, stopFloors := context.WithCancel(ctx)
	defer stopFloors()
	granted, _ := scopes.RoleScopes(fix.Role)
	who := store.Caller{ChurchID: fix.ChurchID, UserID: fix.UserID, Role: fix.Role, Scopes: granted}
	floorURL, err := (&Floor{Pool: floorPool, Who: who}).Serve(floorCtx)
	if err != nil {
		return nil, err
	}
	floorAuditURL, err := (&Floor{Pool: floorPool, Who: who, Audit: true}).Serve(floorCtx)
	if err != nil {
		return nil, err
	}
	e := &env{cfg: cfg, db: d, fix: fix, server: srv, client: &Client{
		HTTP: NewHTTPClient(cfg.Clients), Floor: floorURL, FloorAudit: floorAuditURL, Server: srv.BaseURL, Token: tok, Fix: fix,
	}}

	volTok, err := srv.TokenFor(ctx, d.URL, seed.DemoVoluntarioEmail)
	if err != nil {
		return nil, err
	}
	logf("tool output: the seed's questions as ADMIN and VOLUNTARIO")
	res.ToolCosts, err = MeasureToolCosts(ctx, srv.BaseURL+"/mcp", map[string]string{"ADMIN": tok, "VOLUNTARIO": volTok},
		[]string{"ADMIN", "VOLUNTARIO"}, ToolQuestions(fix.BusiestDay, fix.MonthFrom, fix.MonthTo))
	if err != nil {
		return nil, err
	}

	if !cfg.SkipMain {
		cells, err := e.measure(ctx, cfg.Targets, cfg.Ops, cfg.Rounds, cfg.Duration, "")
		if err != nil {
			return nil, err
		}
		res.Cells = cells
		if rss, err := srv.PeakRSSMB(); err == nil {
			res.PeakRSSMB = rss
		}
		if r, ok := e.client.Prepare(TargetMCP2026, OpToolsList); ok && slices.Contains(cfg.Targets, TargetMCP2026) && slices.Contains(cfg.Ops, OpToolsList) {
			st, err := e.cell(ctx, r, OpToolsList, cfg.Duration, true, 1)
			if err != nil {
				return nil, fmt.Errorf("bench: sequential tools/list: %w", err)
			}
			res.ToolsListSequential = &st
			logf("sequential %s tools/list (1 client): p50 %.3f ms, p99 %.3f ms, %.0f req/s, CPU %.0f µs/req", TargetMCP2026, st.P50, st.P99, st.ReqPerSec, st.CPUPerReq)
		}
	}
	if len(cfg.Scales) > 0 {
		if res.Scale, err = e.scale(ctx); err != nil {
			return nil, err
		}
		if rss, err := srv.PeakRSSMB(); err == nil {
			res.PeakRSSAfterScaleMB = rss
		}
	}
	res.Notes = notes(res)
	res.Goals = EvaluateGoals(Figures{Cells: res.Cells, Scale: res.Scale, PeakRSSMB: res.PeakRSSMB, ReadyMS: res.ReadyMS, ToolCosts: res.ToolCosts,
		ToolsListSequential: res.ToolsListSequential})
	return res, nil
}

// measure runs rounds × ops × targets, alternating the targets within each op so that drift
// (other work on the machine, table growth) hits each of them alike, and returns the cells
// with per-round figures and their medians. Each round starts the targets one further along
// (RoundOrder), so no target always follows the same one. An op measured against another
// op's figures (the read tool against REST's checkins/{date}, baselineOp) alternates with that
// op's targets in one rotation: measured minutes apart, the two drifted apart by ±0.1 of the
// ratio between them (docs/performance.md).
func (e *env) measure(ctx context.Context, targets, ops []string, rounds int, dur time.Duration, label string) ([]Cell, error) {
	per := map[cellKey][]Stats{}
	groups := rotationGroups(targets, ops)
	for round := 1; round <= rounds; round++ {
		for _, g := range groups {
			for _, k := range RoundOrder(g, round) {
				r, ok := e.client.Prepare(k.target, k.op)
				if !ok {
					continue
				}
				st, err := e.cell(ctx, r, k.op, dur, k.target != TargetFloor && k.target != TargetFloorAudit, e.cfg.Clients)
				if err != nil {
					return nil, fmt.Errorf("bench: %s %s: %w", k.target, k.op, err)
				}
				per[k] = append(per[k], st)
				fmt.Fprintf(e.cfg.Log, "%sround %d/%d %-15s %-21s %7.0f req/s  p50 %6.2f  p99 %6.2f ms  errors %d\n",
					label, round, rounds, k.target, k.op, st.ReqPerSec, st.P50, st.P99, st.Errors)
			}
		}
	}
	var cells []Cell
	for _, op := range ops { // report order: by op, then target
		for _, t := range targets {
			if k := (cellKey{t, op}); len(per[k]) > 0 {
				cells = append(cells, Cell{Target: t, Op: op, Stats: MedianStats(per[k]), Rounds: per[k]})
			}
		}
	}
	return cells, nil
}

type cellKey struct{ target, op string }

// rotationGroups are the cells of targets × ops that alternate within a round, in op order:
// each op's targets, and with an op the ops compared with it (baselineOp).
func rotationGroups(targets, ops []string) [][]cellKey {
	var groups [][]cellKey
	for _, op := range ops {
		var cells []cellKey
		for _, t := range targets {
			if hasOp(t, op) {
				cells = append(cells, cellKey{t, op})
			}
		}
		if len(cells) == 0 {
			continue
		}
		i := slices.IndexFunc(groups, func(g []cellKey) bool {
			return baselineOp(op) == g[0].op || baselineOp(g[0].op) == op
		})
		if i < 0 {
			groups = append(groups, cells)
			continue
		}
		groups[i] = append(groups[i], cells...)
	}
	return groups
}

// RoundOrder is the order of the cells (targets) in round (counting from 1): rotated by one
// per round. A fixed order measured a target always right after the same other one (MCP
// 2026-07-28 after REST, with whatever the server kept of REST's load), which showed as a gap
// between the two MCP eras that profiles of each alone did not have.
func RoundOrder[T any](cells []T, round int) []T {
	if len(cells) == 0 {
		return nil
	}
	k := (round - 1) % len(cells)
	return append(slices.Clone(cells[k:]), cells[:k]...)
}

// cell measures one target × op once: probe (a full check of one answer), warm-up, run. The
// check-in starts from the seeded state and leaves it so (see [ResetCheckins]). server says
// the target is the server process, whose CPU time per request is measured; clients is how
// many closed-loop clients send.
func (e *env) cell(ctx context.Context, r *request, op string, dur time.Duration, server bool, clients int) (Stats, error) {
	probeSeq := 0
	if op == OpCheckin {
		if err := ResetCheckins(ctx, e.db, e.fix); err != nil {
			return Stats{}, err
		}
		probeSeq = e.fix.FreshCheckins() - 1 // the last fresh pair: the run's own start fresh
		defer func() { _ = ResetCheckins(context.WithoutCancel(ctx), e.db, e.fix) }()
	}
	size, err := e.client.Probe(ctx, r, probeSeq)
	if err != nil {
		return Stats{}, fmt.Errorf("probe: %w", err)
	}
	minBytes := size / 2
	if op == OpCheckin {
		minBytes = 32 // fresh and repeated check-ins differ in size
	}
	load := LoadConfig{Clients: clients, Warmup: e.cfg.Warmup, Duration: dur}
	if server {
		load.CPU = e.server.CPUTime
	}
	s := RunLoad(ctx, load, e.client.Do(r, minBytes))
	st := Summarize(s)
	if op == OpCheckin {
		st.Repeats = max(0, s.Sent-(e.fix.FreshCheckins()-1)) // the probe took the last fresh pair
	}
	if s.FirstError != "" {
		fmt.Fprintf(e.cfg.Log, "  first error: %.300s\n", s.FirstError)
	}
	return st, ctx.Err()
}

// scale is the cost-growth mode: at each scale (churches), seed the new churches, ANALYZE,
// explain the reads, and measure the reads and the check-in of the demo church.
func (e *env) scale(ctx context.Context) ([]ScaleResult, error) {
	var out []ScaleResult
	ops := append(append([]string{}, ReadOps...), OpCheckin)
	for _, s := range e.cfg.Scales {
		fmt.Fprintf(e.cfg.Log, "scale %d×: seeding and ANALYZE\n", s)
		took, err := e.db.Seed(ctx, s)
		if err != nil {
			return nil, err
		}
		sr := ScaleResult{Scale: s, SeedSeconds: took.Seconds()}
		if err := e.db.Pool.QueryRow(ctx, "SELECT count(*) FROM checkins").Scan(&sr.Checkins); err != nil {
			return nil, fmt.Errorf("bench: count check-ins: %w", err)
		}
		if sr.Cells, err = e.measure(ctx, e.cfg.ScaleTargets, ops, e.cfg.ScaleRounds, e.cfg.ScaleDuration, fmt.Sprintf("%d× ", s)); err != nil {
			return nil, err
		}
		// After the measurement, so the plans' timings are of the warm cache that was measured,
		// not of the pages the seeding just wrote.
		if sr.Plans, err = ExplainReads(ctx, e.db, e.fix); err != nil {
			return nil, err
		}
		out = append(out, sr)
	}
	return out, nil
}

func notes(r *Results) []string {
	var n []string
	for _, c := range r.Cells {
		if c.Op == OpCheckin && c.Repeats > 0 {
			n = append(n, fmt.Sprintf("%s check-in: %d requests (all rounds, warm-up included; %d measured) came after the %d fresh (child, day) pairs of a run and took the idempotent repeat path",
				c.Target, c.Repeats, c.Requests, r.FreshPairs))
		}
		if c.Errors > 0 {
			n = append(n, fmt.Sprintf("%s %s: %d errors (see the progress log for the first)", c.Target, c.Op, c.Errors))
		}
	}
	return n
}

func gitCommit(dir string) string {
	cmd := exec.Command("git", "rev-parse", "--short", "HEAD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	s := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		s += "+dirty"
	}
	return s
}

// DefaultWorkDir is a fresh temporary directory for the server binary and log.
func DefaultWorkDir() (string, error) {
	d, err := os.MkdirTemp("", "neemias-bench-")
	if err != nil {
		return "", fmt.Errorf("bench: work dir: %w", err)
	}
	return d, nil
}
