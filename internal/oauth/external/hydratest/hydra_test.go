package hydratest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/neemias/neemias-mcp/internal/oauth/external/hydratest"
)

// TestHydraFlow runs Hydra with JWT and with opaque access tokens and completes an
// authorization code + PKCE flow through its login and consent app: the JWT carries the
// granted audience, scopes and claims (under "ext"); the opaque token is active at the admin
// introspection endpoint and inactive once the consent is revoked.
func TestHydraFlow(t *testing.T) {
	const aud = "http://127.0.0.1:9/mcp"
	for _, opaque := range []bool{false, true} {
		t.Run(map[bool]string{false: "jwt", true: "opaque"}[opaque], func(t *testing.T) {
			h := hydratest.Start(t, hydratest.Options{OpaqueTokens: opaque})
			c := h.CreateClient(t, "http://127.0.0.1:9/callback", []string{"openid", "roster:read"}, []string{aud})
			h.SetUser(hydratest.User{Subject: "user-1", Claims: map[string]any{"groups": []string{"ministerio-infantil"}}, Audience: []string{aud}})
			tok := flow(t, h, c, "roster:read")
			if !opaque {
				p := payload(t, tok.AccessToken)
				ext, _ := p["ext"].(map[string]any)
				if p["iss"] != h.Issuer || p["sub"] != "user-1" || !slices.Equal(strs(p["aud"]), []string{aud}) ||
					!slices.Equal(strs(p["scp"]), []string{"roster:read"}) || !slices.Equal(strs(ext["groups"]), []string{"ministerio-infantil"}) {
					t.Fatalf("JWT access token claims %v", p)
				}
				return
			}
			if strings.Count(tok.AccessToken, ".") == 2 {
				t.Fatalf("opaque mode issued a JWT")
			}
			if got := introspect(t, h, tok.AccessToken); got["active"] != true || got["sub"] != "user-1" || got["token_use"] != "access_token" {
				t.Fatalf("introspection: %v", got)
			}
			h.RevokeConsent(t, "user-1")
			if got := introspect(t, h, tok.AccessToken); got["active"] != false {
				t.Fatalf("introspection after the consent was revoked: %v", got)
			}
		})
	}
}

func flow(t *testing.T, h *hydratest.Hydra, c hydratest.Client, scope string) *oauth2.Token {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := oauth2.Config{ClientID: c.ID, RedirectURL: c.RedirectURIs[0], Scopes: strings.Fields(scope),
		Endpoint: oauth2.Endpoint{AuthURL: h.Issuer + "/oauth2/auth", TokenURL: h.Issuer + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	cb, err := h.Browse(ctx, cfg.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, h.Client), cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func introspect(t *testing.T, h *hydratest.Hydra, token string) map[string]any {
	t.Helper()
	resp, err := http.PostForm(h.AdminURL+"/admin/oauth2/introspect", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func payload(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func strs(v any) []string {
	a, _ := v.([]any)
	var out []string
	for _, e := range a {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}
