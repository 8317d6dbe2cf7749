package server_test

import (
	"github.com/neemias/neemias-mcp/internal/testsupport"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/config"
	"github.com/neemias/neemias-mcp/internal/server"
)

// edgeCall sends one request with full control over the headers.
func edgeCall(t *testing.T, method, url string, header http.Header, body string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestRESTBehindTheEdge: the findings of the security review of the running server, one row
// each. REST sits behind the same edge as MCP: body limit, strict JSON, one credential, Host
// rules, and the scope check before the body is read.
func TestRESTBehindTheEdge(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	adminTok := a.token(t, admin)
	readOnly := a.token(t, admin, "roster:read")
	checkin := a.base + "/api/v1/tools/neemias_checkin_register"
	kid := a.freeChildren(t, 1, false)[0]
	bearer := func(tok string) http.Header {
		return http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {"application/json"}}
	}
	huge := `{"child_id":"` + kid + `","pad":"` + strings.Repeat("x", 8<<20) + `"}`
	tests := []struct {
		name       string
		method     string
		url        string
		header     http.Header
		body       string
		wantStatus int
		wantCode   string
	}{
		{"8 MB body is refused before it is parsed", "POST", checkin, bearer(adminTok), huge, http.StatusRequestEntityTooLarge, `"code":"too_large"`},
		{"duplicate JSON keys are refused", "POST", checkin, bearer(adminTok), `{"child_id":"` + kid + `","child_id":"` + kid + `"}`, http.StatusBadRequest, `"code":"invalid_input"`},
		{"case-variant JSON keys are refused", "POST", checkin, bearer(adminTok), `{"child_id":"` + kid + `","Child_ID":"x"}`, http.StatusBadRequest, `"code":"invalid_input"`},
		{"two Authorization headers are refused", "GET", a.base + "/api/v1/roster/children",
			http.Header{"Authorization": {"Bearer " + adminTok, "Bearer " + readOnly}}, "", http.StatusBadRequest, `"code":"invalid_input"`},
		{"the scope is checked before the body is read", "POST", checkin, bearer(readOnly), huge, http.StatusForbidden, `"code":"forbidden"`},
		{"a foreign Host is refused", "GET", a.base + "/api/v1/roster/children",
			http.Header{"Authorization": {"Bearer " + adminTok}, "Host": {"evil.example"}}, "", http.StatusForbidden, `"code":"forbidden"`},
		{"no credential: 401 with the Error object", "GET", a.base + "/api/v1/roster/children", nil, "", http.StatusUnauthorized, `"code":"unauthorized"`},
		{"JSON nested deeper than the limit is refused", "POST", checkin, bearer(adminTok),
			`{"child_id":"` + kid + `","pad":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, http.StatusBadRequest, `nesting deeper than 32`},
		{"a foreign Origin is refused", "GET", a.base + "/api/v1/roster/children",
			http.Header{"Authorization": {"Bearer " + adminTok}, "Origin": {"https://evil.example"}}, "", http.StatusForbidden, `"code":"forbidden"`},
		{"two Origin headers are refused", "GET", a.base + "/api/v1/roster/children",
			http.Header{"Authorization": {"Bearer " + adminTok}, "Origin": {a.base, "https://evil.example"}}, "", http.StatusForbidden, `"code":"forbidden"`},
		{"an unknown operation is a 404 with the Error object", "GET", a.base + "/api/v1/no/such/thing", bearer(adminTok), "", http.StatusNotFound, `"code":"not_found"`},
		{"a bad Authorization scheme is 401 with the Error object", "GET", a.base + "/api/v1/roster/children",
			http.Header{"Authorization": {"Basic YWRtaW46YWRtaW4="}}, "", http.StatusUnauthorized, `"code":"unauthorized"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.url
			if host := tt.header.Get("Host"); host != "" {
				req, _ := http.NewRequest(tt.method, url, nil)
				req.Host = host
				req.Header = tt.header.Clone()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.wantStatus || !strings.Contains(string(b), tt.wantCode) {
					t.Fatalf("got %d %s, want %d %s", resp.StatusCode, b, tt.wantStatus, tt.wantCode)
				}
				return
			}
			status, h, body := edgeCall(t, tt.method, url, tt.header, tt.body)
			if status != tt.wantStatus || !strings.Contains(body, tt.wantCode) {
				t.Fatalf("got %d %.300s, want %d %s", status, body, tt.wantStatus, tt.wantCode)
			}
			if h.Get("X-Request-Id") == "" { // the request id is the edge's too, refusals included
				t.Errorf("no X-Request-Id on a refused REST request")
			}
			if status == http.StatusForbidden && tt.header.Get("Origin") == "" && !slices.Contains(testsupport.ChallengeScopes(h.Get("WWW-Authenticate")), "checkins:write") {
				t.Errorf("403 challenge %q does not name the missing scope", h.Get("WWW-Authenticate"))
			}
		})
	}
	if n := a.one(t, `SELECT count(*) FROM checkins WHERE child_id = $1 AND checked_in_at > now() - interval '10 minutes'`, kid); n != "0" {
		t.Errorf("%s check-ins written by refused requests", n)
	}
	// The scope refusal went through the pipeline's one refusal hook: audited once, and the
	// edge's own refusals (size, JSON, credential, Host, Origin) reached no capability.
	if n := a.one(t, `SELECT count(*) FROM audit_log WHERE capability = 'neemias_checkin_register' AND outcome = 'denied' AND action LIKE '%.forbidden'`); n != "1" {
		t.Errorf("%s audit rows for the one scope refusal, want 1", n)
	}
}

// TestRESTRefusalsNameTheRecords: a call refused by the scope check over REST is audited with
// the record ids it named, as over MCP: a tool's from its body, a read's from its path.
func TestRESTRefusalsNameTheRecords(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	readOnly := a.token(t, admin, "roster:read")
	kid := a.freeChildren(t, 1, false)[0]
	hd := http.Header{"Authorization": {"Bearer " + readOnly}, "Content-Type": {"application/json"}}
	for _, call := range []struct{ method, url, body, capability string }{
		{"POST", a.base + "/api/v1/tools/neemias_checkin_register", `{"child_id":"` + kid + `"}`, "neemias_checkin_register"},
		{"GET", a.base + "/api/v1/roster/children/" + kid, "", "roster_child"},
	} {
		if status, _, body := edgeCall(t, call.method, call.url, hd, call.body); status != http.StatusForbidden {
			t.Fatalf("%s %s: %d %.300s, want 403", call.method, call.url, status, body)
		}
		if n := a.one(t, `SELECT count(*) FROM audit_log WHERE capability = $1 AND outcome = 'denied' AND $2::uuid = ANY(target_ids)`, call.capability, kid); n != "1" {
			t.Errorf("%s: %s refusals audited with the child's id, want 1", call.capability, n)
		}
	}
}

// TestMCPRefusesRepeatedRoutingHeaders: a second MCP-Protocol-Version, Mcp-Method or Mcp-Name
// header is a 400, never "the first one wins".
func TestMCPRefusesRepeatedRoutingHeaders(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	tok := a.token(t, admin)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, name := range []string{"MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"} {
		t.Run(name, func(t *testing.T) {
			h := http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {"application/json"},
				"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}}
			h.Add(name, "tools/list")
			if len(h.Values(name)) < 2 {
				h.Add(name, "tools/list")
			}
			status, _, got := edgeCall(t, "POST", a.mcp, h, body)
			if status != http.StatusBadRequest || !strings.Contains(got, "at most once") {
				t.Fatalf("got %d %s, want 400 naming the repeated header", status, got)
			}
		})
	}
}

// TestOneRateLimitAcrossSurfaces: MCP and REST draw on one budget per caller, and REST's
// refusal is a 429 with Retry-After and its Error object.
func TestOneRateLimitAcrossSurfaces(t *testing.T) {
	t.Parallel()
	a := newAppWith(t, server.Config{RatePerSecond: 0.001, RateBurst: 2})
	tok := a.token(t, admin)
	h := http.Header{"Authorization": {"Bearer " + tok}}
	if status, _, _ := edgeCall(t, "GET", a.base+"/api/v1/roster/children", h, ""); status != 200 {
		t.Fatalf("first REST call: %d", status)
	}
	mcpHeader := http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {"application/json"},
		"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}}
	if status, _, body := edgeCall(t, "POST", a.mcp, mcpHeader,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`); status != 200 {
		t.Fatalf("MCP call within the burst: %d %s", status, body)
	}
	status, hdr, body := edgeCall(t, "GET", a.base+"/api/v1/roster/children", h, "")
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || !strings.Contains(body, `"code":"rate_limited"`) {
		t.Fatalf("third call: %d Retry-After=%q %s; want 429 rate_limited", status, hdr.Get("Retry-After"), body)
	}
}

// TestRateLimitOff: with the limit off (--rate-limit 0) a caller is never refused for its
// rate, on REST or MCP, however small the configured rate and burst.
func TestRateLimitOff(t *testing.T) {
	t.Parallel()
	a := newAppWith(t, server.Config{RatePerSecond: 0.001, RateBurst: 1, RateLimitOff: true})
	h := http.Header{"Authorization": {"Bearer " + a.token(t, admin)}}
	for i := range 5 {
		if status, _, body := edgeCall(t, "GET", a.base+"/api/v1/roster/children", h, ""); status != http.StatusOK {
			t.Fatalf("REST call %d with the limit off: %d %.200s", i+1, status, body)
		}
	}
}

// TestRateLimitDefaultsAgree: --rate-limit and --rate-burst default to the server's own
// defaults (what a zero server.Config uses), so `serve` without flags and the tests' servers
// limit alike.
func TestRateLimitDefaultsAgree(t *testing.T) {
	if config.DefaultRateLimit != server.DefaultRatePerSecond || config.DefaultRateBurst != server.DefaultRateBurst {
		t.Errorf("flags default to %v/s burst %d, the server to %v/s burst %d",
			config.DefaultRateLimit, config.DefaultRateBurst, server.DefaultRatePerSecond, server.DefaultRateBurst)
	}
}
