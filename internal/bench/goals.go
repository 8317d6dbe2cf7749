package bench

import (
	"fmt"
	"math"
)

// Goal is one line of issue 8's goals, evaluated on a run.
type Goal struct {
	Name string `json:"name"`
	// Met is false when the figure misses the limit or could not be measured.
	Met    bool   `json:"met"`
	Detail string `json:"detail"`
}

// Cell is one target × operation's median figures.
type Cell struct {
	Target string `json:"target"`
	Op     string `json:"op"`
	Stats
	Rounds []Stats `json:"rounds"`
}

// Figures is what the goals are evaluated on.
type Figures struct {
	Cells []Cell
	// Scale holds the cost-growth figures (MCP 2026-07-28 per scale), empty when not run.
	Scale []ScaleResult
	// PeakRSSMB and ReadyMS are the server process's; negative when not measured.
	PeakRSSMB float64
	ReadyMS   float64
	// ToolCosts are the tool-output figures of the seed's questions (toolcost.go).
	ToolCosts []ToolCost
	// ToolsListSequential is tools/list by one client at a time; nil when not measured.
	ToolsListSequential *Stats
}

func (f Figures) cell(target, op string) (Stats, bool) {
	for _, c := range f.Cells {
		if c.Target == target && c.Op == op {
			return c.Stats, c.Requests > 0
		}
	}
	return Stats{}, false
}

// The limits of issue 8.
const (
	goalMCPvsFloorAudit  = 0.85
	goalMCPp99vsFloor    = 1.5
	goalRESTvsFloorAudit = 0.9
	goalMCPvsREST        = 0.8
	goalScaleLatency     = 1.5
	goalPeakRSSMB        = 80
	goalReadyMS          = 300
)

// EvaluateGoals marks each goal of issue 8 met or missed, with the figures behind it.
func EvaluateGoals(f Figures) []Goal {
	var out []Goal
	mcp, okM := f.cell(TargetMCP2026, OpCheckins)
	fa, okF := f.cell(TargetFloorAudit, OpCheckins)
	rest, okR := f.cell(TargetREST, OpCheckins)
	out = append(out, ratioGoal("MCP 2026-07-28 checkins read ≥ 0.85× floor+audit req/s", mcp, fa, okM && okF, goalMCPvsFloorAudit, "MCP vs floor+audit"))
	out = append(out, p99Goal("MCP 2026-07-28 checkins read p99 ≤ 1.5× floor+audit's", mcp, fa, okM && okF, goalMCPp99vsFloor))
	out = append(out, ratioGoal("REST checkins read ≥ 0.9× floor+audit req/s", rest, fa, okR && okF, goalRESTvsFloorAudit, "REST vs floor+audit"))
	mcp1, ok1 := f.cell(TargetMCP2026, OpRosterChild)
	rest1, ok2 := f.cell(TargetREST, OpRosterChild)
	out = append(out, ratioGoal("one-row read (roster/children/{id}) MCP 2026-07-28 ≥ 0.8× REST req/s", mcp1, rest1, ok1 && ok2, goalMCPvsREST, "MCP vs REST"))
	out = append(out, scaleGoal(f.Scale))
	out = append(out, limitGoal("peak RSS ≤ 80 MB", f.PeakRSSMB, goalPeakRSSMB, "MB"))
	out = append(out, limitGoal("start to ready ≤ 300 ms", f.ReadyMS, goalReadyMS, "ms"))
	out = append(out, toolCostGoal(f.ToolCosts))
	return append(out, issue23Goals(f)...)
}

// The limits of issue 23 ("MCP as cheap as REST").
const (
	goal23MCPvsREST      = 0.9
	goal23MCPp99vsREST   = 1.3
	goal23EraSpread      = 0.1
	goal23PeakRSSMB      = 64
	goal23ReadyMS        = 150
	goal23ToolsListP50MS = 0.3
)

// issue23Goals are issue 23's goals.
func issue23Goals(f Figures) []Goal {
	var out []Goal
	mcp, okM := f.cell(TargetMCP2026, OpCheckins)
	rest, okR := f.cell(TargetREST, OpCheckins)
	out = append(out, ratioGoal("issue 23: MCP 2026-07-28 checkins resources/read ≥ 0.9× REST req/s", mcp, rest, okM && okR, goal23MCPvsREST, "MCP vs REST"))
	out = append(out, p99Goal("issue 23: MCP 2026-07-28 checkins read p99 ≤ 1.3× REST's", mcp, rest, okM && okR, goal23MCPp99vsREST))
	tool, okT := f.cell(TargetMCP2026, OpCheckinsTool)
	out = append(out, ratioGoal("issue 23: MCP 2026-07-28 tools/call of the checkins read tool ≥ 0.9× REST req/s", tool, rest, okT && okR, goal23MCPvsREST, "read tool vs REST"))
	out = append(out, p99Goal("issue 23: MCP 2026-07-28 checkins read tool p99 ≤ 1.3× REST's", tool, rest, okT && okR, goal23MCPp99vsREST))
	mcp1, ok1 := f.cell(TargetMCP2026, OpRosterChild)
	rest1, ok2 := f.cell(TargetREST, OpRosterChild)
	out = append(out, ratioGoal("issue 23: one-row read (roster/children/{id}) MCP 2026-07-28 ≥ 0.9× REST req/s", mcp1, rest1, ok1 && ok2, goal23MCPvsREST, "MCP vs REST"))
	const seqName = "issue 23: tools/list p50 ≤ 0.3 ms sequential (MCP 2026-07-28, one client)"
	if s := f.ToolsListSequential; s != nil && s.Requests > 0 {
		out = append(out, Goal{Name: seqName, Met: s.P50 <= goal23ToolsListP50MS,
			Detail: fmt.Sprintf("p50 %.3f ms, p99 %.3f ms (goal p50 ≤ %.1f ms)", s.P50, s.P99, goal23ToolsListP50MS)})
	} else {
		out = append(out, Goal{Name: seqName, Detail: "not measured"})
	}
	worst, worstOp, measured := 0.0, "", false
	for _, op := range AllOps {
		a, okA := f.cell(TargetMCP2025, op)
		b, okB := f.cell(TargetMCP2026, op)
		if !okA || !okB {
			continue
		}
		measured = true
		if d := math.Abs(Ratio(a.ReqPerSec, b.ReqPerSec) - 1); d > worst {
			worst, worstOp = d, op
		}
	}
	if measured {
		out = append(out, Goal{Name: "issue 23: MCP 2025-11-25 within 10% of 2026-07-28 (req/s, every op)", Met: worst <= goal23EraSpread,
			Detail: fmt.Sprintf("worst %.0f%% (%s)", worst*100, worstOp)})
	} else {
		out = append(out, Goal{Name: "issue 23: MCP 2025-11-25 within 10% of 2026-07-28 (req/s, every op)", Detail: "not measured"})
	}
	out = append(out, limitGoal("issue 23: peak RSS ≤ 64 MB", f.PeakRSSMB, goal23PeakRSSMB, "MB"))
	out = append(out, limitGoal("issue 23: start to ready ≤ 150 ms", f.ReadyMS, goal23ReadyMS, "ms"))
	return out
}

func limitGoal(name string, v, limit float64, unit string) Goal {
	if v < 0 {
		return Goal{Name: name, Detail: "not measured"}
	}
	return Goal{Name: name, Met: v <= limit, Detail: fmt.Sprintf("%.1f %s (goal ≤ %.0f %s)", v, unit, limit, unit)}
}

// scaleGoal compares p50 and p99 of every operation at the largest scale with the smallest;
// the worst ratio decides.
func scaleGoal(scales []ScaleResult) Goal {
	const name = "latency at the largest scale ≤ 1.5× at the smallest (p50 and p99, every op, MCP 2026-07-28)"
	if len(scales) < 2 {
		return Goal{Name: name, Detail: "not measured (run with -scale 1,10,100)"}
	}
	lo, hi := scales[0], scales[len(scales)-1]
	worst, worstWhat := 0.0, ""
	for _, op := range append(append([]string{}, ReadOps...), OpCheckin) {
		a, okA := lo.stats(TargetMCP2026, op)
		b, okB := hi.stats(TargetMCP2026, op)
		if !okA || !okB {
			continue
		}
		for _, p := range []struct {
			label string
			x, y  float64
		}{{"p50", a.P50, b.P50}, {"p99", a.P99, b.P99}} {
			if r := Ratio(p.y, p.x); r > worst {
				worst, worstWhat = r, fmt.Sprintf("%s %s %.1f → %.1f ms", op, p.label, p.x, p.y)
			}
		}
	}
	if worstWhat == "" {
		return Goal{Name: name, Detail: "not measured"}
	}
	worst = math.Round(worst*100) / 100
	return Goal{Name: name, Met: worst <= goalScaleLatency,
		Detail: fmt.Sprintf("worst %.2f× at %d× vs %d×: %s", worst, hi.Scale, lo.Scale, worstWhat)}
}

// ratioGoal is a goal that a's throughput is at least limit times b's (what names the pair).
func ratioGoal(name string, a, b Stats, measured bool, limit float64, what string) Goal {
	if !measured {
		return Goal{Name: name, Detail: "not measured"}
	}
	r := Ratio(a.ReqPerSec, b.ReqPerSec)
	return Goal{Name: name, Met: r >= limit,
		Detail: fmt.Sprintf("%.2f× (%.0f vs %.0f req/s %s; goal ≥ %.2f×)", r, a.ReqPerSec, b.ReqPerSec, what, limit)}
}

// p99Goal is a goal that a's p99 is at most limit times b's (both measured, else "not measured").
func p99Goal(name string, a, b Stats, measured bool, limit float64) Goal {
	if !measured {
		return Goal{Name: name, Detail: "not measured"}
	}
	r := Ratio(a.P99, b.P99)
	return Goal{Name: name, Met: r > 0 && r <= limit, Detail: fmt.Sprintf("%.2f× (%.1f vs %.1f ms)", r, a.P99, b.P99)}
}
