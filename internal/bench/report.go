package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// PrintReport writes the tables and goal lines of r.
func PrintReport(w io.Writer, r *Results) {
	fmt.Fprintf(w, "\nneemias-bench  commit %s  %s  %d CPUs  %d clients  %s warm-up + %s × %d rounds (medians)\n",
		r.Commit, r.GoVersion, r.CPUs, r.Clients, r.Warmup, r.Duration, r.Rounds)
	if f := r.Fixture; f != nil {
		fmt.Fprintf(w, "checkins/{date}: %s (%d rows); roster/children/{id}: %s; attendance/summary: %s..%s\n",
			f.BusiestDay.Format("2006-01-02"), f.BusiestCount, f.Child, f.MonthFrom.Format("2006-01-02"), f.MonthTo.Format("2006-01-02"))
	}
	fmt.Fprintf(w, "server: start to ready %.0f ms (a new database's first start also makes its signing key: %.0f ms), peak RSS %.1f MB",
		r.ReadyMS, r.SigningKeyMS, r.PeakRSSMB)
	if r.PeakRSSAfterScaleMB > 0 {
		fmt.Fprintf(w, " (%.1f MB after the cost-growth mode)", r.PeakRSSAfterScaleMB)
	}
	fmt.Fprintln(w)
	if len(r.Cells) > 0 {
		fmt.Fprintln(w)
		printCells(w, r.Cells)
	}
	if len(r.Scale) > 0 {
		fmt.Fprintln(w)
		printScale(w, r.Scale)
	}
	if len(r.ToolCosts) > 0 {
		fmt.Fprintln(w, "\ntool output the model reads (characters / 4 = tokens; docs/tool-output.md):")
		PrintToolCosts(w, r.ToolCosts)
	}
	fmt.Fprintln(w, "\ngoals (issues 8, 21 and 23):")
	for _, g := range r.Goals {
		mark := "missed"
		if g.Met {
			mark = "met   "
		}
		fmt.Fprintf(w, "  %s  %s: %s\n", mark, g.Name, g.Detail)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func printCells(w io.Writer, cells []Cell) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\ttarget\treq/s\tp50 ms\tp95 ms\tp99 ms\tmax ms\terrors\t×floor\t×floor+audit\tCPU µs/req\t")
	base := map[string]map[string]float64{TargetFloor: {}, TargetFloorAudit: {}}
	for _, c := range cells {
		if m, ok := base[c.Target]; ok {
			m[c.Op] = c.ReqPerSec
		}
	}
	last := ""
	for _, c := range cells {
		op := c.Op
		if op == last {
			op = ""
		}
		last = c.Op
		cpu := "-"
		if c.CPUPerReq > 0 {
			cpu = fmt.Sprintf("%.0f", c.CPUPerReq)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.2f\t%.2f\t%.2f\t%.1f\t%d\t%s\t%s\t%s\t\n", op, c.Target, c.ReqPerSec,
			c.P50, c.P95, c.P99, c.Max, c.Errors, ratioText(c.ReqPerSec, base[TargetFloor][c.Op]),
			ratioText(c.ReqPerSec, base[TargetFloorAudit][c.Op]), cpu)
	}
	tw.Flush()
}

func ratioText(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func printScale(w io.Writer, scales []ScaleResult) {
	fmt.Fprintln(w, "cost growth (demo church; p50 / p99 ms, and the ratio of p50 to the first scale):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"operation", "target"}
	for _, s := range scales {
		head = append(head, fmt.Sprintf("%d× (%d check-ins)", s.Scale, s.Checkins))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, c := range scales[0].Cells {
		row := []string{c.Op, c.Target}
		first, _ := scales[0].stats(c.Target, c.Op)
		for _, s := range scales {
			st, ok := s.stats(c.Target, c.Op)
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, fmt.Sprintf("%.2f / %.2f (%s)", st.P50, st.P99, ratioText(st.P50, first.P50)))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintf(w, "seeding + ANALYZE:")
	for _, s := range scales {
		fmt.Fprintf(w, " %d× %.1f s;", s.Scale, s.SeedSeconds)
	}
	fmt.Fprintln(w)
	printPlans(w, scales)
}

// printPlans prints, per read and scale, what its EXPLAIN (ANALYZE, BUFFERS) shows in one line
// (the buffers of the whole plan, planning and execution time, the scans), then the plans.
func printPlans(w io.Writer, scales []ScaleResult) {
	fmt.Fprintln(w, "EXPLAIN (ANALYZE, BUFFERS) of the reads, as the application role (one execution each, so times are one sample):")
	for _, op := range ReadOps {
		for _, s := range scales {
			if plan, ok := s.Plans[op]; ok {
				fmt.Fprintf(w, "  %s %d×: %s\n", op, s.Scale, PlanSummary(plan))
			}
		}
	}
	for _, op := range ReadOps {
		for _, s := range scales {
			plan, ok := s.Plans[op]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "--- %s at %d×\n", op, s.Scale)
			for _, line := range strings.Split(plan, "\n") {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
	}
}

// PlanSummary is one line about an EXPLAIN (ANALYZE, BUFFERS) text plan: the top node's
// buffers (the whole plan's), planning and execution time, and each scan node once, in order.
func PlanSummary(plan string) string {
	var buffers, planning, execution string
	var scans []string
	seen := map[string]bool{}
	for _, line := range strings.Split(plan, "\n") {
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "->"))
		switch {
		case strings.HasPrefix(t, "Buffers:") && buffers == "":
			buffers = strings.TrimSpace(strings.TrimPrefix(t, "Buffers:"))
		case strings.HasPrefix(t, "Planning Time:"):
			planning = strings.TrimSpace(strings.TrimPrefix(t, "Planning Time:"))
		case strings.HasPrefix(t, "Execution Time:"):
			execution = strings.TrimSpace(strings.TrimPrefix(t, "Execution Time:"))
		case strings.Contains(t, " Scan ") || strings.HasPrefix(t, "Seq Scan"):
			node, _, _ := strings.Cut(t, "  (")
			if !seen[node] {
				seen[node] = true
				scans = append(scans, node)
			}
		}
	}
	return fmt.Sprintf("buffers %s; planning %s, execution %s; %s", orDash(buffers), orDash(planning), orDash(execution), strings.Join(scans, ", "))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteJSON saves r to path, creating its directory.
func WriteJSON(path string, r *Results) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("bench: results directory: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: encode results: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: write results: %w", err)
	}
	return nil
}
