package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// DoFunc sends request number seq (counting from 0 across all clients of a run, so cycling
// operations such as the check-in share one sequence) and fully reads and checks its answer.
type DoFunc func(ctx context.Context, seq int) error

// LoadConfig shapes one closed-loop run.
type LoadConfig struct {
	Clients  int
	Warmup   time.Duration
	Duration time.Duration
	// CPU, when set, reads the CPU time the target has used so far; the difference over the
	// measured window is Sample.CPU.
	CPU func() (time.Duration, error)
}

// RunLoad drives do with cfg.Clients closed-loop clients (each sends its next request when the
// previous answer is in) for cfg.Warmup, discarded, then cfg.Duration, measured. A request
// in flight when the time is up finishes and is counted: closed loop, nothing is cut short.
func RunLoad(ctx context.Context, cfg LoadConfig, do DoFunc) Sample {
	var seq atomic.Int64
	next := func() int { return int(seq.Add(1) - 1) }
	if cfg.Warmup > 0 {
		drive(ctx, cfg.Clients, time.Now().Add(cfg.Warmup), next, do)
	}
	cpu0, cpuErr := readCPU(cfg.CPU)
	start := time.Now()
	per := drive(ctx, cfg.Clients, start.Add(cfg.Duration), next, do)
	out := Sample{Elapsed: time.Since(start), Sent: int(seq.Load())}
	if cpu1, err := readCPU(cfg.CPU); err == nil && cpuErr == nil && cfg.CPU != nil {
		out.CPU = cpu1 - cpu0
	}
	for _, p := range per {
		out.Requests += p.Requests
		out.Errors += p.Errors
		out.Latency = append(out.Latency, p.Latency...)
		if out.FirstError == "" {
			out.FirstError = p.FirstError
		}
	}
	return out
}

func drive(ctx context.Context, clients int, until time.Time, next func() int, do DoFunc) []Sample {
	per := make([]Sample, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func(s *Sample) {
			defer wg.Done()
			s.Latency = make([]time.Duration, 0, 4096)
			for ctx.Err() == nil && time.Now().Before(until) {
				t0 := time.Now()
				err := do(ctx, next())
				d := time.Since(t0)
				s.Requests++
				if err != nil {
					s.Errors++
					if s.FirstError == "" {
						s.FirstError = err.Error()
					}
					continue
				}
				s.Latency = append(s.Latency, d)
			}
		}(&per[c])
	}
	wg.Wait()
	return per
}

func readCPU(f func() (time.Duration, error)) (time.Duration, error) {
	if f == nil {
		return 0, nil
	}
	return f()
}
