package oauth_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
)

// TestRegistrationRefusals is checklist 1F C01–C02: dangerous redirect URIs and abusive
// metadata are refused with RFC 7591 errors and nothing is stored.
func TestRegistrationRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{RegistrationBurst: 1000}) // refused attempts count against the limit too
	redirects := []string{
		"javascript:alert(1)//", "JaVaScRiPt:alert(1)//", "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)",
		"file:///etc/passwd", "blob:https://x.example/1", "mailto:a@x.example", " https://x.example/cb", "\thttps://x.example/cb",
		"\x00https://x.example/cb", "\x0bhttps://x.example/cb", "\x0chttps://x.example/cb", "java\tscript:alert(1)", "java\nscript:alert(1)",
		"https://x.example/c\x7fb", "https://x.example/c\u0085b", "/relative/cb", "", "http://evil.example/cb",
		"https://user:pw@x.example/cb", "https://x.example/cb#frag", "HTTPS://x.example/cb", "https:///cb", "http://127.1/cb",
		"http://[::ffff:127.0.0.1]/cb", "com.example.app:", "https://x.example\\@evil.example/cb",
	}
	before := e.count(`SELECT count(*) FROM oauth_clients`)
	for _, r := range redirects {
		t.Run("redirect "+r, func(t *testing.T) {
			status, out := oauthtest.Register(t, e.base, map[string]any{"redirect_uris": []string{"https://ok.example/cb", r}, "token_endpoint_auth_method": "none"})
			if status != http.StatusBadRequest || out["error"] != "invalid_redirect_uri" {
				t.Errorf("%q: %d %v", r, status, out)
			}
		})
	}
	metadata := []struct {
		name string
		meta map[string]any
		err  string
	}{
		{"password grant", map[string]any{"grant_types": []string{"authorization_code", "password"}}, "invalid_client_metadata"},
		{"client_credentials grant", map[string]any{"grant_types": []string{"client_credentials"}}, "invalid_client_metadata"},
		{"implicit grant", map[string]any{"grant_types": []string{"implicit"}}, "invalid_client_metadata"},
		{"refresh only", map[string]any{"grant_types": []string{"refresh_token"}}, "invalid_client_metadata"},
		{"token response type", map[string]any{"response_types": []string{"token"}}, "invalid_client_metadata"},
		{"unknown auth method", map[string]any{"token_endpoint_auth_method": "tls_client_auth"}, "invalid_client_metadata"},
		{"private_key_jwt", map[string]any{"token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"},
		{"software statement", map[string]any{"software_statement": "eyJhbGciOiJub25lIn0.e30."}, "invalid_software_statement"},
		{"huge client name", map[string]any{"client_name": strings.Repeat("x", 1<<20)}, "invalid_client_metadata"},
		{"long client name", map[string]any{"client_name": strings.Repeat("x", 201)}, "invalid_client_metadata"},
		{"control character in the name", map[string]any{"client_name": "a\u202eb"}, "invalid_client_metadata"},
		{"javascript: logo", map[string]any{"logo_uri": "javascript:alert(1)"}, "invalid_client_metadata"},
		{"http client_uri", map[string]any{"client_uri": "http://x.example"}, "invalid_client_metadata"},
		{"unknown application type", map[string]any{"application_type": "browser"}, "invalid_client_metadata"},
		{"web app with a loopback redirect", map[string]any{"application_type": "web", "redirect_uris": []string{"http://127.0.0.1:3000/cb"}}, "invalid_redirect_uri"},
		{"no redirect URIs", map[string]any{"redirect_uris": []string{}}, "invalid_redirect_uri"},
		{"eleven redirect URIs", map[string]any{"redirect_uris": strings.Split(strings.Repeat("https://x.example/cb,", 11), ",")[:11]}, "invalid_redirect_uri"},
	}
	for _, tc := range metadata {
		t.Run(tc.name, func(t *testing.T) {
			meta := map[string]any{"redirect_uris": []string{"https://ok.example/cb"}, "token_endpoint_auth_method": "none"}
			for k, v := range tc.meta {
				meta[k] = v
			}
			status, out := oauthtest.Register(t, e.base, meta)
			if status != http.StatusBadRequest || out["error"] != tc.err {
				t.Errorf("%d %v, want 400 %s", status, out, tc.err)
			}
		})
	}
	if after := e.count(`SELECT count(*) FROM oauth_clients`); after != before {
		t.Errorf("refused registrations stored %d clients", after-before)
	}
}

// TestRegistration: what a successful registration returns (server-chosen client_id that is
// never a URL, defaults, native inferred from a loopback redirect URI, private-use schemes for
// native apps, no-store), and that it is rate limited per address (C03).
func TestRegistration(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{RegistrationBurst: 3, RegistrationPerHour: 1})
	req, _ := http.NewRequest(http.MethodPost, e.base+"/register", strings.NewReader(
		`{"client_id":"https://attacker.example/x.json","client_secret":"mine","redirect_uris":["http://127.0.0.1:8000/cb","cursor://anysphere.cursor-mcp/oauth/callback","com.example.app:/oauth2redirect"],"client_name":"Meu cliente","token_endpoint_auth_method":"none"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://localhost:6274")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	_ = jsonDecode(resp, &out)
	resp.Body.Close()
	id, _ := out["client_id"].(string)
	if resp.StatusCode != http.StatusCreated || id == "" || strings.Contains(id, ":") || out["client_secret"] != nil ||
		out["application_type"] != "native" || out["token_endpoint_auth_method"] != "none" ||
		strs(out["grant_types"])[0] != "authorization_code" || resp.Header.Get("Cache-Control") != "no-store" ||
		resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("registration: %d %v %v", resp.StatusCode, out, resp.Header)
	}
	for range 2 {
		if status, out := oauthtest.Register(t, e.base, map[string]any{"redirect_uris": []string{"https://ok.example/cb"}}); status != http.StatusCreated {
			t.Fatalf("within the burst: %d %v", status, out)
		}
	}
	body := `{"redirect_uris":["https://ok.example/cb"]}`
	resp, err = http.Post(e.base+"/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("over the limit: %d Retry-After=%q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if n := e.count(`SELECT count(*) FROM oauth_clients`); n != 3 {
		t.Errorf("%d clients stored, want 3", n)
	}
}
