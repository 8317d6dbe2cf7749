package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func cell(target, op string, rps, p50, p99 float64) Cell {
	return Cell{Target: target, Op: op, Stats: Stats{ReqPerSec: rps, P50: p50, P99: p99, Requests: 1}}
}

func goalByPrefix(t *testing.T, gs []Goal, prefix string) Goal {
	t.Helper()
	for _, g := range gs {
		if strings.HasPrefix(g.Name, prefix) {
			return g
		}
	}
	t.Fatalf("no goal %q in %+v", prefix, gs)
	return Goal{}
}

func TestEvaluateGoals(t *testing.T) {
	scale := func(p50at100 float64) []ScaleResult {
		return []ScaleResult{
			{Scale: 1, Cells: []Cell{cell(TargetMCP2026, OpCheckins, 100, 10, 20), cell(TargetMCP2026, OpCheckin, 100, 2, 4)}},
			{Scale: 100, Cells: []Cell{cell(TargetMCP2026, OpCheckins, 100, p50at100, 20), cell(TargetMCP2026, OpCheckin, 100, 2, 4)}},
		}
	}
	tests := []struct {
		name   string
		f      Figures
		goal   string
		met    bool
		detail string
	}{
		{"MCP at 0.85× of floor+audit is met (limit inclusive)", Figures{Cells: []Cell{
			cell(TargetFloorAudit, OpCheckins, 400, 4, 10), cell(TargetMCP2026, OpCheckins, 340, 5, 12)}},
			"MCP 2026-07-28 checkins read ≥", true, "0.85×"},
		{"MCP at 0.32× is missed", Figures{Cells: []Cell{
			cell(TargetFloorAudit, OpCheckins, 426, 4, 10), cell(TargetMCP2026, OpCheckins, 138, 14, 26)}},
			"MCP 2026-07-28 checkins read ≥", false, "0.32×"},
		{"p99 at 1.5× is met", Figures{Cells: []Cell{
			cell(TargetFloorAudit, OpCheckins, 400, 4, 10), cell(TargetMCP2026, OpCheckins, 340, 5, 15)}},
			"MCP 2026-07-28 checkins read p99", true, "1.50×"},
		{"p99 at 2.4× is missed", Figures{Cells: []Cell{
			cell(TargetFloorAudit, OpCheckins, 400, 4, 10.6), cell(TargetMCP2026, OpCheckins, 138, 14, 25.7)}},
			"MCP 2026-07-28 checkins read p99", false, "2.42×"},
		{"missing MCP cell is not measured, so missed", Figures{Cells: []Cell{cell(TargetFloorAudit, OpCheckins, 400, 4, 10)}},
			"MCP 2026-07-28 checkins read ≥", false, "not measured"},
		{"REST 0.9×", Figures{Cells: []Cell{cell(TargetFloorAudit, OpCheckins, 400, 4, 10), cell(TargetREST, OpCheckins, 360, 5, 12)}},
			"REST checkins read", true, "0.90×"},
		{"one-row MCP vs REST 0.43× missed", Figures{Cells: []Cell{cell(TargetREST, OpRosterChild, 1238, 1.5, 4), cell(TargetMCP2026, OpRosterChild, 532, 3.2, 10.2)}},
			"one-row read", false, "0.43×"},
		{"scale 1.4× met", Figures{Scale: scale(14)}, "latency at the largest", true, "1.40×"},
		{"scale 1.6× missed", Figures{Scale: scale(16)}, "latency at the largest", false, "1.60×"},
		{"scale not run", Figures{}, "latency at the largest", false, "not measured"},
		{"sequential tools/list p50 0.25 ms met", Figures{ToolsListSequential: &Stats{P50: 0.25, P99: 0.9, Requests: 10}},
			"issue 23: tools/list p50", true, "p50 0.250 ms"},
		{"sequential tools/list p50 0.31 ms missed", Figures{ToolsListSequential: &Stats{P50: 0.31, P99: 0.9, Requests: 10}},
			"issue 23: tools/list p50", false, "p50 0.310 ms"},
		{"sequential tools/list not run", Figures{}, "issue 23: tools/list p50", false, "not measured"},
		{"RSS 61 MB met", Figures{PeakRSSMB: 61}, "peak RSS", true, "61.0 MB"},
		{"RSS 81 MB missed", Figures{PeakRSSMB: 81}, "peak RSS", false, "81.0 MB"},
		{"RSS unknown", Figures{PeakRSSMB: -1}, "peak RSS", false, "not measured"},
		{"ready 300 ms met", Figures{ReadyMS: 300}, "start to ready", true, "300.0 ms"},
		{"ready 301 ms missed", Figures{ReadyMS: 301}, "start to ready", false, "301.0 ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := goalByPrefix(t, EvaluateGoals(tc.f), tc.goal)
			if g.Met != tc.met || !strings.Contains(g.Detail, tc.detail) {
				t.Errorf("goal %q: met=%v %q; want met=%v containing %q", g.Name, g.Met, g.Detail, tc.met, tc.detail)
			}
		})
	}
}

func TestCheckinPairCycle(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	d1, d2 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	f := &Fixture{CheckinChildren: []uuid.UUID{a, b}, CheckinDays: []time.Time{d1, d2}}
	want := []struct {
		child uuid.UUID
		day   time.Time
	}{{a, d1}, {b, d1}, {a, d2}, {b, d2}, {a, d1}} // every pair once, then the cycle repeats
	for seq, w := range want {
		c, d := f.CheckinPair(seq)
		if c != w.child || !d.Equal(w.day) {
			t.Errorf("seq %d: (%v, %v), want (%v, %v)", seq, c, d, w.child, w.day)
		}
	}
	if f.FreshCheckins() != 4 {
		t.Errorf("FreshCheckins = %d, want 4", f.FreshCheckins())
	}
}

func TestDatabaseURL(t *testing.T) {
	got, err := databaseURL("postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "neemias_bench")
	if err != nil || got != "postgres://postgres@127.0.0.1:5432/neemias_bench?sslmode=disable" {
		t.Errorf("databaseURL = %q, %v", got, err)
	}
	if _, err := databaseURL("host=127.0.0.1 user=postgres", "x"); err == nil {
		t.Error("a key=value string was accepted")
	}
	for name, ok := range map[string]bool{"neemias_bench": true, "b1": true, "1b": false, "x;drop": false, "": false, "Caps": false} {
		if validIdent(name) != ok {
			t.Errorf("validIdent(%q) = %v", name, !ok)
		}
	}
}

func TestPeakRSS(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/status"
	if err := writeFile(path, "Name:\tx\nVmPeak:\t  900000 kB\nVmHWM:\t   62464 kB\nVmRSS:\t 50000 kB\n"); err != nil {
		t.Fatal(err)
	}
	if mb, err := peakRSS(path); err != nil || mb != 61 {
		t.Errorf("peakRSS = %v, %v; want 61 MB", mb, err)
	}
}

// TestRoundOrder: each round starts one target further along, every target once.
func TestRoundOrder(t *testing.T) {
	ts := []string{"a", "b", "c"}
	for round, want := range map[int]string{1: "abc", 2: "bca", 3: "cab", 4: "abc"} {
		if got := strings.Join(RoundOrder(ts, round), ""); got != want {
			t.Errorf("round %d: %s, want %s", round, got, want)
		}
	}
	if strings.Join(ts, "") != "abc" {
		t.Error("RoundOrder changed its argument")
	}
}

// TestRotationGroups: the read tool alternates with the targets of the read it is compared
// with, in whichever order the ops are given; every other op alternates its own targets.
func TestRotationGroups(t *testing.T) {
	show := func(groups [][]cellKey) string {
		var parts []string
		for _, g := range groups {
			var cells []string
			for _, k := range g {
				cells = append(cells, k.target+" "+k.op)
			}
			parts = append(parts, "["+strings.Join(cells, ", ")+"]")
		}
		return strings.Join(parts, " ")
	}
	for _, tc := range []struct {
		targets, ops []string
		want         string
	}{
		{[]string{TargetREST, TargetMCP2026}, []string{OpCheckins, OpCheckinsTool, OpRosterChild},
			"[rest checkins/{date}, mcp-2026-07-28 checkins/{date}, mcp-2026-07-28 checkins read tool] [rest roster/children/{id}, mcp-2026-07-28 roster/children/{id}]"},
		{[]string{TargetREST, TargetMCP2026}, []string{OpCheckinsTool, OpToolsList, OpCheckins},
			"[mcp-2026-07-28 checkins read tool, rest checkins/{date}, mcp-2026-07-28 checkins/{date}] [mcp-2026-07-28 tools/list]"},
		{[]string{TargetREST}, []string{OpCheckinsTool, OpToolsList, OpCheckins}, "[rest checkins/{date}]"},
	} {
		if got := show(rotationGroups(tc.targets, tc.ops)); got != tc.want {
			t.Errorf("%v × %v:\n got %s\nwant %s", tc.targets, tc.ops, got, tc.want)
		}
	}
}

// TestProcessCPU: utime + stime of stat(5), counted from the end of the command name, which
// may hold spaces and parentheses.
func TestProcessCPU(t *testing.T) {
	path := t.TempDir() + "/stat"
	stat := "4242 (neemias mcp) (x) S 1 4242 4242 0 -1 4194560 9054 0 0 0 1234 56 0 0 20 0 12 0 100 1000 2000\n"
	if err := writeFile(path, stat); err != nil {
		t.Fatal(err)
	}
	if d, err := processCPU(path); err != nil || d != 12900*time.Millisecond {
		t.Errorf("processCPU = %v, %v; want 12.9s", d, err)
	}
	if err := writeFile(path, "4242 (x) S 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := processCPU(path); err == nil {
		t.Error("processCPU of a short stat line: no error")
	}
}

// TestPlanSummary: the whole plan's buffers, the two times and each scan once.
func TestPlanSummary(t *testing.T) {
	plan := `Limit  (cost=49.31..49.32 rows=1 width=126) (actual time=0.076..0.079 rows=1 loops=1)
  Buffers: shared hit=9
  ->  Nested Loop  (cost=16.08..32.15 rows=1 width=97) (actual time=0.026..0.028 rows=1 loops=1)
        Buffers: shared hit=6
        ->  Index Scan using children_church_id_key on children c  (cost=8.04..16.07 rows=1 width=74) (actual time=0.015..0.016 rows=1 loops=1)
              Index Cond: (id = '009b4b32-7898-5cf3-9cec-17f16f6bae55'::uuid)
        ->  Seq Scan on classes cl  (cost=0.00..1.07 rows=1 width=26) (actual time=0.003..0.004 rows=1 loops=1)
        ->  Index Scan using children_church_id_key on children c2  (cost=8.04..16.07 rows=1 width=74) (actual time=0.015..0.016 rows=1 loops=1)
Planning Time: 1.292 ms
Execution Time: 0.184 ms`
	want := "buffers shared hit=9; planning 1.292 ms, execution 0.184 ms; Index Scan using children_church_id_key on children c, Seq Scan on classes cl, Index Scan using children_church_id_key on children c2"
	if got := PlanSummary(plan); got != want {
		t.Errorf("PlanSummary =\n%s\nwant\n%s", got, want)
	}
}
