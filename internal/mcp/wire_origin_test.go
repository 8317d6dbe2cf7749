package mcp_test

import (
	"net/http"
	"testing"
)

// Host/Origin allowlist (security checklist T01–T05): 403 before authentication or JSON-RPC
// processing, including the DNS-rebinding pair that net/http.CrossOriginProtection lets through.
func TestHostOriginAllowlist(t *testing.T) {
	srv := newTestServer(t)
	body := rpc(1, "tools/list", nil)
	tests := []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"T01 foreign Origin", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"T02 rebinding Host+Origin pair", map[string]string{"Host": "evil.example:8443", "Origin": "http://evil.example:8443", "Sec-Fetch-Site": "same-origin"}, http.StatusForbidden},
		{"T02 foreign Host without Origin", map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{"T03 Origin null", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"Origin with userinfo trick", map[string]string{"Origin": "https://app.example.org@evil.example"}, http.StatusForbidden},
		{"Origin of the right host, wrong scheme", map[string]string{"Origin": "http://app.example.org"}, http.StatusForbidden},
		{"T01 foreign Origin without token is still 403", map[string]string{"Origin": "https://evil.example", "Authorization": ""}, http.StatusForbidden},
		{"T04 no Origin (CLI client)", nil, http.StatusOK},
		{"allowlisted Origin", map[string]string{"Origin": "https://app.example.org"}, http.StatusOK},
		{"allowlisted public Host", map[string]string{"Host": "mcp.example.org"}, http.StatusOK},
		{"T05 localhost Host any port", map[string]string{"Host": "localhost:1234"}, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex := post(t, srv, tc.headers, body)
			if ex.status != tc.want {
				t.Fatalf("status = %d, want %d; body %s", ex.status, tc.want, ex.body)
			}
			if tc.want == http.StatusForbidden && ex.header.Get("WWW-Authenticate") != "" {
				t.Errorf("a Host/Origin rejection must come before authentication")
			}
		})
	}
}
