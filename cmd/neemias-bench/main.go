// Command neemias-bench is `make bench`: the load generator of issue 8. It creates its own
// database (demo church, ANALYZEd), starts the real server as a subprocess and a hand-written
// floor in process, measures every target × operation in alternating rounds, prints the table
// and the goals, and writes the results as JSON. See docs/performance.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/neemias/neemias-mcp/internal/bench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "neemias-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	adminURL := os.Getenv("DATABASE_URL")
	if adminURL == "" {
		adminURL = bench.DefaultAdminURL
	}
	var (
		cfg                                     = bench.Config{Log: os.Stderr}
		out, targets, ops, scales, scaleTargets string
		quick                                   bool
	)
	flag.StringVar(&cfg.AdminURL, "database-url", adminURL, "admin PostgreSQL URL (default $DATABASE_URL); the bench database is created next to it")
	flag.StringVar(&cfg.Database, "database", "neemias_bench", "name of the bench database (dropped and recreated)")
	flag.StringVar(&out, "out", "bench-out/bench-results.json", "where the JSON results go")
	flag.IntVar(&cfg.Clients, "clients", 2, "closed-loop clients per target")
	flag.DurationVar(&cfg.Warmup, "warmup", 500*time.Millisecond, "warm-up per measurement, discarded")
	flag.DurationVar(&cfg.Duration, "duration", 2*time.Second, "measured time per target, operation and round")
	flag.IntVar(&cfg.Rounds, "rounds", 5, "rounds (targets alternate within each; medians are reported): a 2 s window on a shared 2-core machine is ±8%, and the median of 3 left ratios ±0.06")
	flag.StringVar(&targets, "targets", strings.Join(bench.AllTargets, ","), "targets, in round order")
	flag.StringVar(&ops, "ops", strings.Join(bench.AllOps, ","), "operations")
	flag.StringVar(&scales, "scale", "", "cost-growth mode: comma-separated scales in churches, e.g. 1,10,100 (empty: off)")
	flag.StringVar(&scaleTargets, "scale-targets", bench.TargetFloorAudit+","+bench.TargetMCP2026, "targets of the cost-growth mode")
	flag.DurationVar(&cfg.ScaleDuration, "scale-duration", 2*time.Second, "measured time per operation and target at each scale")
	flag.IntVar(&cfg.ScaleRounds, "scale-rounds", 3, "rounds at each scale")
	flag.BoolVar(&cfg.SkipMain, "scale-only", false, "run only the cost-growth mode")
	flag.BoolVar(&quick, "quick", false, "smoke test: 1 round of 300 ms after 100 ms warm-up, cost growth off")
	flag.StringVar(&cfg.WorkDir, "work-dir", "", "directory for the server binary and log (default: a new temporary one)")
	flag.Parse()

	if quick {
		cfg.Rounds, cfg.Duration, cfg.Warmup, scales = 1, 300*time.Millisecond, 100*time.Millisecond, ""
	}
	var err error
	if cfg.Targets, err = names(targets, bench.AllTargets); err != nil {
		return fmt.Errorf("-targets: %w", err)
	}
	if cfg.Ops, err = names(ops, bench.AllOps); err != nil {
		return fmt.Errorf("-ops: %w", err)
	}
	if cfg.ScaleTargets, err = names(scaleTargets, bench.AllTargets); err != nil {
		return fmt.Errorf("-scale-targets: %w", err)
	}
	if cfg.Scales, err = ints(scales); err != nil {
		return fmt.Errorf("-scale: %w", err)
	}
	if cfg.SkipMain && len(cfg.Scales) == 0 {
		return fmt.Errorf("-scale-only needs -scale")
	}
	if cfg.Clients < 1 || cfg.Rounds < 1 || cfg.Duration <= 0 || cfg.ScaleRounds < 1 {
		return fmt.Errorf("-clients, -rounds, -scale-rounds must be at least 1 and -duration positive")
	}
	if cfg.ModuleDir, err = os.Getwd(); err != nil {
		return err
	}
	if cfg.WorkDir == "" {
		if cfg.WorkDir, err = bench.DefaultWorkDir(); err != nil {
			return err
		}
		defer os.RemoveAll(cfg.WorkDir)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	bench.PrintReport(os.Stdout, res)
	if abs, err := filepath.Abs(out); err == nil {
		out = abs
	}
	if err := bench.WriteJSON(out, res); err != nil {
		return err
	}
	fmt.Printf("results: %s\n", out)
	return nil
}

// names splits a comma-separated list and checks each entry against known.
func names(list string, known []string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("unknown %q; known: %s", n, strings.Join(known, ", "))
		}
		out = append(out, n)
	}
	return out, nil
}

// ints parses "1,10,100": ascending positive integers.
func ints(list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("%q: want ascending positive integers", list)
		}
		out = append(out, n)
	}
	return out, nil
}
