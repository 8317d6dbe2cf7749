package cimd

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fakeResolver answers from a table; a host it does not know is "not found", so tests never
// reach real DNS. Successive lookups of a host walk its answers; the last one repeats.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

func newResolver() *fakeResolver {
	return &fakeResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
}

// set makes host resolve to addrs (one answer per lookup, in order).
func (r *fakeResolver) set(host string, answers ...[]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var seq [][]netip.Addr
	for _, a := range answers {
		var as []netip.Addr
		for _, s := range a {
			as = append(as, netip.MustParseAddr(s))
		}
		seq = append(seq, as)
	}
	r.answers[host] = seq
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.calls[host], len(seq)-1)
	r.calls[host]++
	return seq[i], nil
}

func (r *fakeResolver) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// dialGuard wraps the fetcher's Control hook: it records every socket the fetcher was about to
// connect and refuses (failing the test) any that is not loopback, so a regression can never
// make a test send a packet off this machine.
type dialGuard struct {
	t     *testing.T
	mu    sync.Mutex
	addrs []string
}

func (g *dialGuard) wrap(next func(string, string, syscall.RawConn) error) func(string, string, syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		g.mu.Lock()
		g.addrs = append(g.addrs, address)
		g.mu.Unlock()
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !ap.Addr().Unmap().IsLoopback() {
			g.t.Errorf("fetcher tried to connect to non-loopback %q", address)
			return ErrForbiddenAddress
		}
		return next(network, address, c)
	}
}

func (g *dialGuard) dials() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.addrs...)
}

// newTestFetcher builds a Fetcher whose resolver is a fake (real DNS is never used) and whose
// connects are guarded.
func newTestFetcher(t *testing.T, opts Options) (*Fetcher, *dialGuard) {
	t.Helper()
	if opts.Resolver == nil {
		opts.Resolver = newResolver()
	}
	f, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	g := &dialGuard{t: t}
	f.dialer.Net.Control = g.wrap(f.dialer.Net.Control)
	return f, g
}

// canary is a loopback TCP listener that counts connections: SSRF attempts aimed at its port
// must leave it untouched.
type canary struct {
	ln    net.Listener
	conns atomic.Int64
}

func newCanary(t *testing.T) *canary {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &canary{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return c
}

func (c *canary) port() int { return c.ln.Addr().(*net.TCPAddr).Port }

// tlsServer starts an httptest TLS server on 127.0.0.1 and returns it with a pool trusting it.
func tlsServer(t *testing.T, h http.Handler) (*httptest.Server, *x509.CertPool) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, pool
}

func port(srv *httptest.Server) int { return srv.Listener.Addr().(*net.TCPAddr).Port }

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
