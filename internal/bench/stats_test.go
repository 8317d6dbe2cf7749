package bench

import (
	"math"
	"testing"
	"time"
)

func msd(xs ...float64) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x * float64(time.Millisecond))
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   float64
	}{
		{"empty", nil, 50, 0},
		{"one sample is every percentile", msd(7), 99, 7},
		{"p50 of 1..100 is 50 (nearest rank)", hundred, 50, 50},
		{"p95 of 1..100", hundred, 95, 95},
		{"p99 of 1..100", hundred, 99, 99},
		{"p100 is the max", hundred, 100, 100},
		{"tiny p is the min", hundred, 0.001, 1},
		{"p50 of an even count is the lower middle", msd(1, 2, 3, 4), 50, 2},
		{"p99 of four is the max", msd(1, 2, 3, 4), 99, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("Percentile(p%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize(Sample{Requests: 5, Errors: 1, Elapsed: 2 * time.Second, Latency: msd(4, 1, 3, 2)})
	want := Stats{ReqPerSec: 2, P50: 2, P95: 4, P99: 4, Max: 4, Requests: 5, Errors: 1}
	if s != want {
		t.Errorf("Summarize = %+v, want %+v (errors are not throughput; unsorted input)", s, want)
	}
	if z := Summarize(Sample{}); z != (Stats{}) {
		t.Errorf("Summarize of nothing = %+v", z)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tc := range tests {
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

func TestMedianStats(t *testing.T) {
	got := MedianStats([]Stats{
		{ReqPerSec: 100, P50: 3, P95: 5, P99: 9, Max: 20, Requests: 300, Errors: 0},
		{ReqPerSec: 300, P50: 1, P95: 4, P99: 7, Max: 10, Requests: 900, Errors: 2},
		{ReqPerSec: 200, P50: 2, P95: 6, P99: 8, Max: 30, Requests: 600, Errors: 0},
	})
	want := Stats{ReqPerSec: 200, P50: 2, P95: 5, P99: 8, Max: 20, Requests: 1800, Errors: 2}
	if got != want {
		t.Errorf("MedianStats = %+v, want %+v (each figure's own median; counts summed)", got, want)
	}
}

func TestRatio(t *testing.T) {
	if r := Ratio(1, 0); r != 0 {
		t.Errorf("Ratio(1, 0) = %v, want 0", r)
	}
	if r := Ratio(3, 4); math.Abs(r-0.75) > 1e-12 {
		t.Errorf("Ratio(3, 4) = %v", r)
	}
}
