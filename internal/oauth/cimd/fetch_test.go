package cimd

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// docServer serves client metadata documents from a TLS server on 127.0.0.1. Client ids use
// the host name example.com (in httptest's certificate) resolved by a fake resolver to
// 127.0.0.1, so the whole name → check → connect path runs.
type docServer struct {
	t    *testing.T
	mux  *http.ServeMux
	port int
	pool *x509.CertPool
	res  *fakeResolver
	hits sync.Map // path → *atomic.Int64
}

func newDocServer(t *testing.T) *docServer {
	d := &docServer{t: t, mux: http.NewServeMux(), res: newResolver()}
	srv, pool := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := d.hits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		d.mux.ServeHTTP(w, r)
	}))
	d.port, d.pool = port(srv), pool
	d.res.set("example.com", []string{"127.0.0.1"})
	d.res.set("client.example.com", []string{"127.0.0.1", "::1"})
	return d
}

// id is the client_id (and URL) of path on host.
func (d *docServer) id(host, path string) string {
	return fmt.Sprintf("https://%s:%d%s", host, d.port, path)
}

func (d *docServer) count(path string) int64 {
	n, ok := d.hits.Load(path)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// doc serves a valid document for path, with extra headers and members.
func (d *docServer) doc(host, path string, header http.Header, extra map[string]any) {
	d.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		m := map[string]any{
			"client_id":     d.id(host, path),
			"client_name":   "Test Client",
			"redirect_uris": []string{"https://app.example.com/callback", "http://127.0.0.1/callback"},
		}
		for k, v := range extra {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		for k, vs := range header {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(m)
	})
}

func (d *docServer) fetcher(opts Options) (*Fetcher, *dialGuard) {
	opts.Resolver, opts.AllowLoopbackForTests, opts.RootCAs = d.res, true, d.pool
	return newTestFetcher(d.t, opts)
}

func TestFetchValidDocument(t *testing.T) {
	d := newDocServer(t)
	d.doc("example.com", "/client.json", nil, map[string]any{"logo_uri": "https://app.example.com/logo.png", "grant_types": []string{"authorization_code", "refresh_token"}})
	d.doc("client.example.com", "/oauth/meta.json", nil, nil)
	f, g := d.fetcher(Options{})

	md, err := f.Fetch(context.Background(), d.id("example.com", "/client.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Metadata{
		ClientID:                d.id("example.com", "/client.json"),
		ClientName:              "Test Client",
		RedirectURIs:            []string{"https://app.example.com/callback", "http://127.0.0.1/callback"},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: "none",
		LogoURI:                 "https://app.example.com/logo.png",
	}
	if diff := cmp.Diff(want, md); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	// The connect went through the Control hook, to a checked loopback address.
	if dials := g.dials(); len(dials) != 1 || !strings.HasPrefix(dials[0], "127.0.0.1:") {
		t.Errorf("dials = %v", dials)
	}
	if _, err := f.Fetch(context.Background(), d.id("client.example.com", "/oauth/meta.json")); err != nil {
		t.Errorf("second host: %v", err)
	}
	// An IP literal client_id (allowed only because the test option admits loopback).
	d.doc("127.0.0.1", "/literal.json", nil, nil)
	if _, err := f.Fetch(context.Background(), d.id("127.0.0.1", "/literal.json")); err != nil {
		t.Errorf("IP literal: %v", err)
	}
}

func TestFetchRefusesBadResponses(t *testing.T) {
	d := newDocServer(t)
	canaryHits := func() int64 { return d.count("/canary.json") }
	d.doc("example.com", "/canary.json", nil, nil)
	for _, code := range []int{301, 302, 303, 307, 308} {
		d.mux.HandleFunc(fmt.Sprintf("/redirect%d.json", code), func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, d.id("example.com", "/canary.json"), code)
		})
	}
	big := strings.Repeat("x", 6<<10)
	d.mux.HandleFunc("/big-declared.json", func(w http.ResponseWriter, r *http.Request) {
		b := fmt.Sprintf(`{"client_id":%q,"redirect_uris":["https://a.example.com/cb"],"padding":%q}`, d.id("example.com", "/big-declared.json"), big)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		fmt.Fprint(w, b)
	})
	d.mux.HandleFunc("/big-chunked.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":["https://a.example.com/cb"],"padding":"`, d.id("example.com", "/big-chunked.json"))
		w.(http.Flusher).Flush() // no Content-Length: chunked
		for range 64 {
			fmt.Fprint(w, strings.Repeat("y", 1024))
		}
		fmt.Fprint(w, `"}`)
	})
	body := func(ct, s string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			fmt.Fprint(w, s)
		}
	}
	d.mux.HandleFunc("/html.json", body("text/html", `{"client_id":"x"}`))
	d.mux.HandleFunc("/notype.json", body("", `{}`))
	d.mux.HandleFunc("/invalid.json", body("application/json", `{"client_id":`))
	d.mux.HandleFunc("/array.json", body("application/json", `[]`))
	d.mux.HandleFunc("/utf8.json", body("application/json", "{\"client_name\":\"\xff\xfe\"}"))
	d.mux.HandleFunc("/trailing.json", body("application/json", `{} {}`))
	d.mux.HandleFunc("/secret.json", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "SECRET_BODY_CANARY internal stack trace", http.StatusInternalServerError)
	})
	d.mux.HandleFunc("/notfound.json", http.NotFound)
	d.doc("example.com", "/mismatch.json", nil, map[string]any{"client_id": d.id("example.com", "/mismatch.json") + "/"})
	d.doc("example.com", "/mismatch-port.json", nil, map[string]any{"client_id": "https://example.com:443/mismatch-port.json"})
	d.doc("example.com", "/js.json", nil, map[string]any{"redirect_uris": []string{"javascript:alert(document.domain)//SECRET_BODY_CANARY"}})

	f, _ := d.fetcher(Options{})
	cases := []struct {
		path, want string
		kind       error
		reason     Reason
	}{
		{"/redirect301.json", "redirect (status 301) not followed", ErrFetch, ReasonRedirect},
		{"/redirect302.json", "redirect (status 302) not followed", ErrFetch, ReasonRedirect},
		{"/redirect303.json", "redirect (status 303) not followed", ErrFetch, ReasonRedirect},
		{"/redirect307.json", "redirect (status 307) not followed", ErrFetch, ReasonRedirect},
		{"/redirect308.json", "redirect (status 308) not followed", ErrFetch, ReasonRedirect},
		{"/big-declared.json", "larger than 5120 bytes", ErrFetch, ReasonTooLarge},
		{"/big-chunked.json", "larger than 5120 bytes", ErrFetch, ReasonTooLarge},
		{"/html.json", "content type is not JSON", ErrFetch, ReasonContentType},
		{"/notype.json", "content type is not JSON", ErrFetch, ReasonContentType},
		{"/invalid.json", "malformed JSON", ErrInvalidDocument, ReasonInvalidJSON},
		{"/array.json", "not a JSON object", ErrInvalidDocument, ReasonInvalidJSON},
		{"/utf8.json", "not valid UTF-8", ErrInvalidDocument, ReasonInvalidJSON},
		{"/trailing.json", "trailing data", ErrInvalidDocument, ReasonInvalidJSON},
		{"/secret.json", "status 500", ErrFetch, ReasonStatus},
		{"/notfound.json", "status 404", ErrFetch, ReasonStatus},
		{"/mismatch.json", "client_id does not equal the document URL", ErrInvalidDocument, ReasonClientIDMismatch},
		{"/mismatch-port.json", "client_id does not equal the document URL", ErrInvalidDocument, ReasonClientIDMismatch},
		{"/js.json", `scheme "javascript" is not allowed`, ErrInvalidDocument, ReasonInvalidMember},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			_, err := f.Fetch(context.Background(), d.id("example.com", tc.path))
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fetch = %v, want %v containing %q", err, tc.kind, tc.want)
			}
			if e, ok := ReasonOf(err); !ok || e.Reason != tc.reason {
				t.Errorf("Fetch = %v: reason %+v, want %s", err, e, tc.reason)
			}
			if e, _ := ReasonOf(err); tc.reason == ReasonInvalidMember && e.Member != "redirect_uris" || tc.reason == ReasonStatus && e.Status == 0 {
				t.Errorf("Fetch = %v: member %q status %d", err, e.Member, e.Status)
			}
			if strings.Contains(err.Error(), "SECRET_BODY_CANARY") || strings.Contains(err.Error(), "yyyy") {
				t.Errorf("error echoes the response body: %v", err)
			}
		})
	}
	if n := canaryHits(); n != 0 {
		t.Errorf("redirect target fetched %d times", n)
	}
}

// TestFetchTimeouts: a server that stalls before its headers, or trickles its body, fails at
// the total timeout instead of holding the authorization request.
func TestFetchTimeouts(t *testing.T) {
	d := newDocServer(t)
	d.mux.HandleFunc("/stall.json", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	d.mux.HandleFunc("/trickle.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"client_id":"`)
		for range 100 {
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := fmt.Fprint(w, "a"); err != nil {
				return
			}
		}
	})
	f, _ := d.fetcher(Options{Timeout: 400 * time.Millisecond})
	for _, p := range []string{"/stall.json", "/trickle.json"} {
		t.Run(p, func(t *testing.T) {
			start := time.Now()
			_, err := f.Fetch(context.Background(), d.id("example.com", p))
			if !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), "timed out") {
				t.Fatalf("Fetch = %v, want a timeout", err)
			}
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("took %v", el)
			}
		})
	}
}

func TestFetchCallerCancellationIsNotCached(t *testing.T) {
	d := newDocServer(t)
	release := make(chan struct{})
	d.mux.HandleFunc("/slow.json", func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":["https://a.example.com/cb"]}`, d.id("example.com", "/slow.json"))
	})
	f, _ := d.fetcher(Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := f.Fetch(ctx, d.id("example.com", "/slow.json")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Fetch = %v, want the caller's deadline", err)
	}
	close(release)
	if _, err := f.Fetch(context.Background(), d.id("example.com", "/slow.json")); err != nil {
		t.Fatalf("after the caller gave up, the fetch should still succeed: %v", err)
	}
	if n := d.count("/slow.json"); n != 1 {
		t.Errorf("hits = %d, want 1 (the detached fetch is shared)", n)
	}
}

func TestFetchCache(t *testing.T) {
	d := newDocServer(t)
	d.doc("example.com", "/maxage.json", http.Header{"Cache-Control": {"public, max-age=120"}}, nil)
	d.doc("example.com", "/aged.json", http.Header{"Cache-Control": {"max-age=120"}, "Age": {"100"}}, nil)
	d.doc("example.com", "/nostore.json", http.Header{"Cache-Control": {"no-store"}}, nil)
	d.doc("example.com", "/nocache.json", http.Header{"Cache-Control": {"no-cache"}}, nil)
	d.doc("example.com", "/maxage0.json", http.Header{"Cache-Control": {"max-age=0"}}, nil)
	d.doc("example.com", "/short.json", http.Header{"Cache-Control": {"max-age=1"}}, nil)
	d.doc("example.com", "/forever.json", http.Header{"Cache-Control": {"max-age=999999999"}}, nil)
	d.doc("example.com", "/plain.json", nil, nil)
	var failing atomic.Bool
	failing.Store(true)
	d.mux.HandleFunc("/flaky.json", func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":["https://a.example.com/cb"]}`, d.id("example.com", "/flaky.json"))
	})
	clk := newClock()
	f, _ := d.fetcher(Options{Now: clk.now, MinTTL: 10 * time.Second, MaxTTL: time.Hour, DefaultTTL: 5 * time.Minute, NegativeTTL: 10 * time.Second})
	fetch := func(path string) error {
		_, err := f.Fetch(context.Background(), d.id("example.com", path))
		return err
	}
	for _, p := range []string{"/maxage.json", "/aged.json", "/nostore.json", "/nocache.json", "/maxage0.json", "/short.json", "/forever.json", "/plain.json"} {
		for range 2 {
			if err := fetch(p); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
	}
	want := map[string]int64{"/maxage.json": 1, "/aged.json": 1, "/nostore.json": 2, "/nocache.json": 2, "/maxage0.json": 2, "/short.json": 1, "/forever.json": 1, "/plain.json": 1}
	for p, n := range want {
		if got := d.count(p); got != n {
			t.Errorf("%s: %d fetches after two calls, want %d", p, got, n)
		}
	}
	// Age 100 of max-age 120 leaves 20 s; max-age=1 is raised to MinTTL (10 s).
	clk.advance(11 * time.Second)
	fetch("/short.json")
	fetch("/aged.json")
	if d.count("/short.json") != 2 || d.count("/aged.json") != 1 {
		t.Errorf("after 11 s: short=%d aged=%d, want 2 and 1", d.count("/short.json"), d.count("/aged.json"))
	}
	clk.advance(10 * time.Second) // 21 s
	fetch("/aged.json")
	if d.count("/aged.json") != 2 {
		t.Errorf("aged entry outlived max-age − Age")
	}
	clk.advance(98 * time.Second) // 119 s
	fetch("/maxage.json")
	if d.count("/maxage.json") != 1 {
		t.Errorf("max-age=120 refetched at 119 s")
	}
	clk.advance(2 * time.Second) // 121 s
	fetch("/maxage.json")
	if d.count("/maxage.json") != 2 {
		t.Errorf("max-age=120 not refetched at 121 s")
	}
	clk.advance(time.Hour - 120*time.Second) // past MaxTTL from the start
	fetch("/forever.json")
	if d.count("/forever.json") != 2 {
		t.Errorf("huge max-age not capped at MaxTTL")
	}

	// Failures are remembered briefly, then retried.
	if err := fetch("/flaky.json"); !errors.Is(err, ErrFetch) {
		t.Fatalf("flaky: %v", err)
	}
	failing.Store(false)
	if err := fetch("/flaky.json"); !errors.Is(err, ErrFetch) {
		t.Errorf("negative result not cached: %v", err)
	}
	if d.count("/flaky.json") != 1 {
		t.Errorf("flaky fetched %d times within NegativeTTL", d.count("/flaky.json"))
	}
	clk.advance(11 * time.Second)
	if err := fetch("/flaky.json"); err != nil {
		t.Errorf("after NegativeTTL: %v", err)
	}

	// Callers get copies.
	md, _ := f.Fetch(context.Background(), d.id("example.com", "/maxage.json"))
	md.RedirectURIs[0] = "https://evil.example.com/cb"
	md2, _ := f.Fetch(context.Background(), d.id("example.com", "/maxage.json"))
	if md2.RedirectURIs[0] == "https://evil.example.com/cb" {
		t.Error("cached metadata was modified through a returned value")
	}
}

func TestFetchCacheBounded(t *testing.T) {
	d := newDocServer(t)
	for i := range 5 {
		d.doc("example.com", fmt.Sprintf("/c%d.json", i), http.Header{"Cache-Control": {fmt.Sprintf("max-age=%d", 100+i)}}, nil)
	}
	clk := newClock()
	f, _ := d.fetcher(Options{Now: clk.now, MinTTL: time.Second, MaxEntries: 3})
	for i := range 5 {
		if _, err := f.Fetch(context.Background(), d.id("example.com", fmt.Sprintf("/c%d.json", i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.cache.len(); n != 3 {
		t.Errorf("cache holds %d entries, want 3", n)
	}
	// The soonest-expiring entries were evicted; the latest ones are still cached.
	f.Fetch(context.Background(), d.id("example.com", "/c4.json"))
	if d.count("/c4.json") != 1 {
		t.Error("newest entry was evicted")
	}
}

func TestFetchSingleFlight(t *testing.T) {
	d := newDocServer(t)
	d.mux.HandleFunc("/slow.json", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":["https://a.example.com/cb"]}`, d.id("example.com", "/slow.json"))
	})
	f, _ := d.fetcher(Options{})
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := f.Fetch(context.Background(), d.id("example.com", "/slow.json")); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := d.count("/slow.json"); n != 1 {
		t.Errorf("%d fetches for 10 concurrent callers, want 1", n)
	}
}

func TestNewRefusesTestOptionsInProduction(t *testing.T) {
	if _, err := New(Options{RootCAs: x509.NewCertPool()}); err == nil {
		t.Error("RootCAs accepted without AllowLoopbackForTests")
	}
	if _, err := New(Options{MaxBytes: 1 << 20}); err == nil {
		t.Error("MaxBytes above 64 KiB accepted")
	}
	f, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f.policy.AllowLoopback || f.maxBytes != DefaultMaxBytes {
		t.Errorf("zero Options are not the production defaults: %+v", f.policy)
	}
}

func TestFreshness(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		h      http.Header
		ttl    time.Duration
		stated bool
	}{
		{http.Header{}, 0, false},
		{http.Header{"Cache-Control": {"max-age=60"}}, time.Minute, true},
		{http.Header{"Cache-Control": {`max-age="60"`}}, time.Minute, true},
		{http.Header{"Cache-Control": {"Max-Age=60, public"}}, time.Minute, true},
		{http.Header{"Cache-Control": {"max-age=60, s-maxage=30"}}, 30 * time.Second, true},
		{http.Header{"Cache-Control": {"max-age=60"}, "Age": {"70"}}, 0, true},
		{http.Header{"Cache-Control": {"max-age=60, no-store"}}, 0, true},
		{http.Header{"Cache-Control": {"public", "no-cache"}}, 0, true},
		{http.Header{"Cache-Control": {"max-age=abc"}}, 0, false},
		{http.Header{"Expires": {now.Add(time.Hour).Format(http.TimeFormat)}, "Date": {now.Format(http.TimeFormat)}}, time.Hour, true},
		{http.Header{"Expires": {"0"}}, 0, true},
		{http.Header{"Cache-Control": {"max-age=99999999999999999999"}}, (1<<31 - 1) * time.Second, true},
	}
	for _, tc := range cases {
		ttl, ok := freshness(tc.h, now)
		if ttl != tc.ttl || ok != tc.stated {
			t.Errorf("freshness(%v) = %v, %v; want %v, %v", tc.h, ttl, ok, tc.ttl, tc.stated)
		}
	}
}
