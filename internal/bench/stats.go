package bench

import (
	"math"
	"slices"
	"time"
)

// Sample is what one closed-loop run of one operation against one target measured.
type Sample struct {
	Requests int             `json:"requests"`
	Errors   int             `json:"errors"`
	Elapsed  time.Duration   `json:"elapsed_ns"`
	Latency  []time.Duration `json:"-"` // of the successful requests, in completion order
	// Sent counts the warm-up's requests too: how far a cycling operation got.
	Sent int `json:"sent"`
	// FirstError is the first failure's text, so a broken target is diagnosed, not just counted.
	FirstError string `json:"first_error,omitempty"`
	// CPU is the CPU time (user + system) the server process spent over the measured window;
	// 0 for the floors, which run inside the load generator.
	CPU time.Duration `json:"cpu_ns,omitempty"`
}

// Stats are the figures of one run (or the medians of several).
type Stats struct {
	ReqPerSec float64 `json:"req_per_s"`
	P50       float64 `json:"p50_ms"`
	P95       float64 `json:"p95_ms"`
	P99       float64 `json:"p99_ms"`
	Max       float64 `json:"max_ms"`
	Requests  int     `json:"requests"`
	Errors    int     `json:"errors"`
	// Repeats counts the check-ins past the fresh (child, day) pairs: the idempotent path.
	Repeats int `json:"repeats,omitempty"`
	// CPUPerReq is the server's CPU time per request in microseconds (0: not measured). Unlike
	// throughput it hardly moves with what else runs on the machine, so it shows a transport's
	// own cost even when the run is noisy.
	CPUPerReq float64 `json:"cpu_us_per_req,omitempty"`
}

// Percentile is the nearest-rank percentile p (0 < p ≤ 100) of sorted, in milliseconds; 0 for
// no samples. Nearest rank, not interpolation: every figure reported is one that was observed.
func Percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return ms(sorted[rank-1])
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Summarize turns a run's samples into its figures. Throughput counts successful requests
// only: an error answered fast must not look like speed.
func Summarize(s Sample) Stats {
	lat := slices.Clone(s.Latency)
	slices.Sort(lat)
	st := Stats{Requests: s.Requests, Errors: s.Errors}
	if s.Elapsed > 0 {
		st.ReqPerSec = float64(s.Requests-s.Errors) / s.Elapsed.Seconds()
	}
	st.P50, st.P95, st.P99 = Percentile(lat, 50), Percentile(lat, 95), Percentile(lat, 99)
	if s.CPU > 0 && s.Requests > 0 {
		st.CPUPerReq = float64(s.CPU) / float64(time.Microsecond) / float64(s.Requests)
	}
	if len(lat) > 0 {
		st.Max = ms(lat[len(lat)-1])
	}
	return st
}

// Median is the median of xs (the mean of the middle two for an even count); 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianStats is the per-figure median over rounds; requests and errors are summed, since a
// single error in any round must show.
func MedianStats(rounds []Stats) Stats {
	pick := func(f func(Stats) float64) float64 {
		xs := make([]float64, len(rounds))
		for i, r := range rounds {
			xs[i] = f(r)
		}
		return Median(xs)
	}
	out := Stats{
		ReqPerSec: pick(func(s Stats) float64 { return s.ReqPerSec }),
		P50:       pick(func(s Stats) float64 { return s.P50 }),
		P95:       pick(func(s Stats) float64 { return s.P95 }),
		P99:       pick(func(s Stats) float64 { return s.P99 }),
		Max:       pick(func(s Stats) float64 { return s.Max }),
		CPUPerReq: pick(func(s Stats) float64 { return s.CPUPerReq }),
	}
	for _, r := range rounds {
		out.Requests += r.Requests
		out.Errors += r.Errors
		out.Repeats += r.Repeats
	}
	return out
}

// Ratio is a/b, or 0 when b is 0 (a missing baseline is no ratio, not infinity).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
