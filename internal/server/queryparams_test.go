package server_test

import (
	"html"
	"net/http"
	"strings"
	"testing"
)

// TestQueryParametersReadAsWritten (issue 24): every surface that reads a query string (REST,
// the OAuth pages) or a form (the token and revocation endpoints) refuses a ";"-separated pair
// (Go's readers dropped it, silently for r.URL.Query(): "from=…;to=…" was served as no range
// at all) and a parameter given twice (RFC 6749 §3.1), with a 400 that names the parameter.
// RFC 8707's resource may repeat. The MCP endpoint reads no query string.
func TestQueryParametersReadAsWritten(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	tok := a.token(t, admin)
	api := a.base + "/api/v1"

	for _, tc := range []struct{ query, param, reason string }{
		{"from=2026-01-04;to=2026-01-31", "from", `";" does not separate parameters`},
		{"from=2026-01-04&to=2026-01-31;class_id=x", "to", `";" does not separate parameters`},
		{"from=2026-01-04&from=2026-01-11", "from", "must be given at most once"},
		{"to=2026-01-31&%74o=2026-02-28", "to", "must be given at most once"},
	} {
		status, _, body := restCall(t, "GET", api+"/attendance/summary?"+tc.query, tok, "")
		v := decodeObject(t, tc.query, body)
		if detail, _ := v["detail"].(string); status != 400 || v["code"] != "invalid_input" || v["field"] != tc.param ||
			!strings.HasPrefix(detail, "invalid input: "+tc.param+": ") || !strings.Contains(detail, tc.reason) {
			t.Errorf("REST ?%s: %d %s, want 400 invalid_input naming %q (%s)", tc.query, status, body, tc.param, tc.reason)
		}
	}
	if status, _, body := restCall(t, "GET", api+"/attendance/summary?from=2026-01-04&to=2026-01-31", tok, ""); status != 200 {
		t.Errorf("REST, a clean query: %d %s", status, body)
	}

	// The OAuth pages: the error page, nothing looked up, nothing redirected.
	for _, tc := range []struct{ path, want string }{
		{"/authorize?response_type=code&client_id=a&client_id=b&redirect_uri=http://localhost:3000/cb", `Repeated parameter: "client_id".`},
		{"/authorize?response_type=code;client_id=a&redirect_uri=http://localhost:3000/cb", `Parameter "response_type": ";" does not separate parameters`},
		{"/authorize?response_type=code&client_id=a&redirect_uri=http://localhost:3000/cb&redirect_uri=https://evil.example/cb", `Repeated parameter: "redirect_uri".`},
		{"/consent?id=00000000-0000-4000-8000-000000000001;x=1", `Parameter "id": ";"`},
		{"/login?id=1&id=2", `Repeated parameter: "id".`},
		{"/set-password?code=1&code=2", `Repeated parameter: "code".`},
	} {
		status, h, body := edgeCall(t, "GET", a.base+tc.path, nil, "")
		if status != 400 || h.Get("Location") != "" || !strings.Contains(html.UnescapeString(body), tc.want) {
			t.Errorf("GET %s: %d (Location %q), want 400 saying %s; body %.300s", tc.path, status, h.Get("Location"), tc.want, body)
		}
	}

	// The token and revocation endpoints: invalid_request naming the parameter.
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	for _, tc := range []struct{ path, body, param string }{
		{"/token", "grant_type=authorization_code;code=abc&client_id=x", "grant_type"},
		{"/token", "grant_type=authorization_code&code=abc&code=def&client_id=x", "code"},
		{"/token", "grant_type=refresh_token&refresh_token=a&client_id=x&client_id=y", "client_id"},
		{"/revoke", "token=a&token=b&client_id=x", "token"},
		{"/revoke", "token=a;client_id=x", "token"},
	} {
		status, _, body := edgeCall(t, "POST", a.base+tc.path, form, tc.body)
		v := decodeObject(t, tc.path, body)
		if desc, _ := v["error_description"].(string); status != 400 || v["error"] != "invalid_request" || !strings.Contains(desc, `"`+tc.param+`"`) {
			t.Errorf("POST %s %q: %d %s, want 400 invalid_request naming %q", tc.path, tc.body, status, body, tc.param)
		}
	}
}
