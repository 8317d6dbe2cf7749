package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
)

// TestCodeRedemptionAttacks is checklist 1E at the token endpoint (O04–O09, O15–O17): each
// case gets a fresh code; what must happen to the code and to tokens already issued is
// checked after the attack.
func TestCodeRedemptionAttacks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")
	other := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")

	type outcome struct {
		status     int
		err        string
		codeIntact bool // the legitimate redemption still works afterwards
	}
	cases := []struct {
		name   string
		attack func(t *testing.T, code, verifier string) oauthtest.TokenResponse
		want   outcome
	}{
		{"O04 wrong verifier", func(t *testing.T, code, _ string) oauthtest.TokenResponse {
			v, _ := oauthtest.NewPKCE()
			return oauthtest.Exchange(t, e.base, c, code, v)
		}, outcome{400, "invalid_grant", true}},
		{"O04 verifier missing", func(t *testing.T, code, _ string) oauthtest.TokenResponse {
			return oauthtest.Token(t, e.base, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.RedirectURI}, "client_id": {c.ID}}, "", "")
		}, outcome{400, "invalid_request", true}},
		{"O04 verifier too short", func(t *testing.T, code, v string) oauthtest.TokenResponse {
			return oauthtest.Exchange(t, e.base, c, code, v[:42])
		}, outcome{400, "invalid_request", true}},
		{"O04 verifier outside the unreserved set", func(t *testing.T, code, v string) oauthtest.TokenResponse {
			return oauthtest.Exchange(t, e.base, c, code, v[:42]+"+")
		}, outcome{400, "invalid_request", true}},
		{"O05 downgrade: the challenge sent as the verifier", func(t *testing.T, code, v string) oauthtest.TokenResponse {
			var challenge string
			_ = e.st.Pool().QueryRow(t.Context(), `SELECT code_challenge FROM oauth_codes WHERE used_at IS NULL ORDER BY created_at DESC LIMIT 1`).Scan(&challenge)
			return oauthtest.Exchange(t, e.base, c, code, challenge)
		}, outcome{400, "invalid_grant", true}},
		{"O08 code presented by another client", func(t *testing.T, code, v string) oauthtest.TokenResponse {
			return oauthtest.Exchange(t, e.base, other, code, v)
		}, outcome{400, "invalid_grant", true}},
		{"O10 redirect_uri differs at the token endpoint", func(t *testing.T, code, v string) oauthtest.TokenResponse {
			cc := c
			cc.RedirectURI = "http://127.0.0.1:3001/cb"
			return oauthtest.Exchange(t, e.base, cc, code, v)
		}, outcome{400, "invalid_grant", true}},
		{"O16 resource expansion at the token endpoint", func(t *testing.T, code, v string) oauthtest.TokenResponse {
			return oauthtest.Token(t, e.base, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.RedirectURI},
				"client_id": {c.ID}, "code_verifier": {v}, "resource": {"https://other.example/mcp"}}, "", "")
		}, outcome{400, "invalid_target", true}},
		{"O17 repeated parameter", func(t *testing.T, code, v string) oauthtest.TokenResponse {
			return rawToken(t, e.base, "application/x-www-form-urlencoded", "grant_type=authorization_code&code="+code+"&code=x&client_id="+c.ID+
				"&redirect_uri="+url.QueryEscape(c.RedirectURI)+"&code_verifier="+v)
		}, outcome{400, "invalid_request", true}},
		{"O17 JSON body", func(t *testing.T, code, v string) oauthtest.TokenResponse {
			return rawToken(t, e.base, "application/json", `{"grant_type":"authorization_code","code":"`+code+`"}`)
		}, outcome{400, "invalid_request", true}},
		{"O17 content type that merely contains the form type", func(t *testing.T, code, v string) oauthtest.TokenResponse {
			return rawToken(t, e.base, "text/plain; x=application/x-www-form-urlencoded", "grant_type=authorization_code&code="+code)
		}, outcome{400, "invalid_request", true}},
		{"O15 password grant", func(t *testing.T, _, _ string) oauthtest.TokenResponse {
			return oauthtest.Token(t, e.base, url.Values{"grant_type": {"password"}, "username": {seed.DemoAdminEmail}, "password": {seed.DemoPassword}, "client_id": {c.ID}}, "", "")
		}, outcome{400, "unsupported_grant_type", true}},
		{"O15 client_credentials for a public client", func(t *testing.T, _, _ string) oauthtest.TokenResponse {
			return oauthtest.Token(t, e.base, url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ID}}, "", "")
		}, outcome{400, "unauthorized_client", true}},
		{"unknown client", func(t *testing.T, code, v string) oauthtest.TokenResponse {
			return oauthtest.Exchange(t, e.base, oauthtest.Client{ID: "BBBBBBBBBBBBBBBBBBBBBBBB", RedirectURI: c.RedirectURI}, code, v)
		}, outcome{401, "invalid_client", true}},
		{"unknown code", func(t *testing.T, _, v string) oauthtest.TokenResponse {
			return oauthtest.Exchange(t, e.base, c, "not-a-code", v)
		}, outcome{400, "invalid_grant", true}},
		{"O09 expired code", func(t *testing.T, code, v string) oauthtest.TokenResponse {
			e.exec(`UPDATE oauth_codes SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`)
			return oauthtest.Exchange(t, e.base, c, code, v)
		}, outcome{400, "invalid_grant", false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, verifier := e.code(t, c, seed.DemoAdminEmail, "roster:read")
			got := tc.attack(t, code, verifier)
			if got.Status != tc.want.status || got.Error != tc.want.err || got.AccessToken != "" {
				t.Errorf("attack: %d %s (%s), want %d %s and no token", got.Status, got.Error, got.ErrorDescription, tc.want.status, tc.want.err)
			}
			if got.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("error response without Cache-Control: no-store")
			}
			legit := oauthtest.Exchange(t, e.base, c, code, verifier)
			if (legit.Status == http.StatusOK) != tc.want.codeIntact {
				t.Errorf("legitimate redemption afterwards: %d %s, want it to work: %v", legit.Status, legit.Error, tc.want.codeIntact)
			}
		})
	}
}

// TestCodeReplayRevokesItsTokens is O06 and O07: a second redemption of a used code fails and
// revokes what the first one issued (access token refused by /mcp, refresh token dead); a
// replay with a wrong verifier or by another client fails without revoking anything.
func TestCodeReplayRevokesItsTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")
	other := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")
	code, verifier := e.code(t, c, seed.DemoAdminEmail, "roster:read")
	first := oauthtest.Exchange(t, e.base, c, code, verifier)
	if first.Status != http.StatusOK {
		t.Fatalf("first redemption: %+v", first)
	}
	wrong, _ := oauthtest.NewPKCE()
	for _, r := range []oauthtest.TokenResponse{
		oauthtest.Exchange(t, e.base, c, code, wrong),
		oauthtest.Exchange(t, e.base, other, code, verifier),
	} {
		if r.Status != http.StatusBadRequest || r.Error != "invalid_grant" {
			t.Errorf("replay with bad parameters: %d %s", r.Status, r.Error)
		}
	}
	if status, _, _ := oauthtest.ReadRoster(t, e.base, first.AccessToken); status != http.StatusOK {
		t.Fatalf("a replay with bad parameters revoked the tokens (O07): %d", status)
	}
	replay := oauthtest.Exchange(t, e.base, c, code, verifier)
	if replay.Status != http.StatusBadRequest || replay.Error != "invalid_grant" || replay.AccessToken != "" {
		t.Fatalf("replay: %+v", replay)
	}
	if status, www, _ := oauthtest.ReadRoster(t, e.base, first.AccessToken); status != http.StatusUnauthorized || !strings.Contains(www, `error="invalid_token"`) {
		t.Errorf("the first access token after the replay: %d %q, want 401 invalid_token", status, www)
	}
	if r := oauthtest.Refresh(t, e.base, c, first.RefreshToken, nil); r.Status != http.StatusBadRequest || r.Error != "invalid_grant" {
		t.Errorf("the first refresh token after the replay: %d %s", r.Status, r.Error)
	}
	if n := e.count(`SELECT count(*) FROM oauth_grants WHERE revoked_reason = 'code_replay'`); n != 1 {
		t.Errorf("grants revoked for code replay: %d", n)
	}
}

// TestRefreshAttacks is O18–O20 and the rotation rules: a refresh token is single use (reuse
// revokes the whole family), scopes only narrow, the resource is fixed, the token is bound to
// its client, a disabled account ends the grant, and RFC 7009 revocation works.
func TestRefreshAttacks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")
	other := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")

	t.Run("O19 reuse after rotation revokes the family", func(t *testing.T) {
		tok, _ := e.grant(t, c, seed.DemoAdminEmail, "roster:read")
		second := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, nil)
		if second.Status != http.StatusOK {
			t.Fatalf("refresh: %+v", second)
		}
		reuse := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, nil)
		if reuse.Status != http.StatusBadRequest || reuse.Error != "invalid_grant" {
			t.Errorf("reuse: %d %s", reuse.Status, reuse.Error)
		}
		if r := oauthtest.Refresh(t, e.base, c, second.RefreshToken, nil); r.Error != "invalid_grant" {
			t.Errorf("the newest refresh token of a revoked family: %d %s", r.Status, r.Error)
		}
		for _, at := range []string{tok.AccessToken, second.AccessToken} {
			if status, _, _ := oauthtest.ReadRoster(t, e.base, at); status != http.StatusUnauthorized {
				t.Errorf("an access token of a revoked family: %d", status)
			}
		}
	})

	t.Run("O18 scopes never grow, may narrow", func(t *testing.T) {
		tok, _ := e.grant(t, c, seed.DemoAdminEmail, "roster:read checkins:read")
		for _, scope := range []string{"roster:read children:read", "children:read", "roster:read checkins:read attendance:read"} {
			r := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, url.Values{"scope": {scope}})
			if r.Status != http.StatusBadRequest || r.Error != "invalid_scope" {
				t.Errorf("refresh asking %q: %d %s %q", scope, r.Status, r.Error, r.Scope)
			}
		}
		narrow := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, url.Values{"scope": {"checkins:read"}})
		if narrow.Status != http.StatusOK || narrow.Scope != "checkins:read" {
			t.Fatalf("narrowing: %+v", narrow)
		}
		if status, _, _ := oauthtest.ReadRoster(t, e.base, narrow.AccessToken); status != http.StatusForbidden {
			t.Errorf("a narrowed token reads the roster: %d", status)
		}
		// The grant keeps its scopes: the next refresh without scope gets both again.
		again := oauthtest.Refresh(t, e.base, c, narrow.RefreshToken, nil)
		if again.Status != http.StatusOK || !sameScopes(again.Scope, "roster:read checkins:read") {
			t.Errorf("refresh after narrowing: %+v", again)
		}
	})

	t.Run("O18 another resource is refused and the grant is unchanged", func(t *testing.T) {
		tok, _ := e.grant(t, c, seed.DemoAdminEmail, "roster:read")
		r := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, url.Values{"resource": {"https://other.example/mcp"}})
		if r.Status != http.StatusBadRequest || r.Error != "invalid_target" {
			t.Errorf("other resource: %d %s", r.Status, r.Error)
		}
		if ok := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, url.Values{"resource": {e.base + "/mcp/"}}); ok.Status != http.StatusOK {
			t.Errorf("the refresh token should be intact: %d %s", ok.Status, ok.Error)
		}
	})

	t.Run("O20 refresh token of another client", func(t *testing.T) {
		tok, _ := e.grant(t, c, seed.DemoAdminEmail, "roster:read")
		if r := oauthtest.Refresh(t, e.base, other, tok.RefreshToken, nil); r.Status != http.StatusBadRequest || r.Error != "invalid_grant" {
			t.Errorf("other client: %d %s", r.Status, r.Error)
		}
		if ok := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, nil); ok.Status != http.StatusOK {
			t.Errorf("the owner's refresh afterwards: %d %s", ok.Status, ok.Error)
		}
	})

	t.Run("O20 expired refresh token", func(t *testing.T) {
		tok, _ := e.grant(t, c, seed.DemoAdminEmail, "roster:read")
		e.exec(`UPDATE oauth_grants SET expires_at = now() - interval '1 second' WHERE id = (
			SELECT grant_id FROM oauth_codes WHERE grant_id IS NOT NULL ORDER BY used_at DESC LIMIT 1)`)
		if r := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, nil); r.Error != "invalid_grant" {
			t.Errorf("expired grant: %d %s", r.Status, r.Error)
		}
	})

	t.Run("A14 a disabled account ends the grant", func(t *testing.T) {
		tok, _ := e.grant(t, c, seed.DemoVoluntarioEmail, "roster:read")
		e.exec(`UPDATE users SET disabled_at = now() WHERE id = $1`, seed.DemoVoluntarioID)
		t.Cleanup(func() { e.exec(`UPDATE users SET disabled_at = NULL WHERE id = $1`, seed.DemoVoluntarioID) })
		if r := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, nil); r.Error != "invalid_grant" {
			t.Errorf("disabled account: %d %s", r.Status, r.Error)
		}
		if status, _, _ := oauthtest.ReadRoster(t, e.base, tok.AccessToken); status != http.StatusUnauthorized {
			t.Errorf("the disabled account's access token: %d", status)
		}
	})

	t.Run("RFC 7009 revocation", func(t *testing.T) {
		tok, _ := e.grant(t, c, seed.DemoAdminEmail, "roster:read")
		resp := revoke(t, e.base, c.ID, tok.RefreshToken)
		if resp != http.StatusOK {
			t.Fatalf("revoke: %d", resp)
		}
		if r := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, nil); r.Error != "invalid_grant" {
			t.Errorf("refresh after revocation: %d %s", r.Status, r.Error)
		}
		if status, _, _ := oauthtest.ReadRoster(t, e.base, tok.AccessToken); status != http.StatusUnauthorized {
			t.Errorf("access token after revocation: %d", status)
		}
		// Revoking by access token, and revoking someone else's token (a no-op), both say 200.
		tok2, _ := e.grant(t, c, seed.DemoAdminEmail, "roster:read")
		if revoke(t, e.base, other.ID, tok2.AccessToken) != http.StatusOK {
			t.Error("revocation by another client must answer 200")
		}
		if status, _, _ := oauthtest.ReadRoster(t, e.base, tok2.AccessToken); status != http.StatusOK {
			t.Errorf("another client revoked the token: %d", status)
		}
		if revoke(t, e.base, c.ID, tok2.AccessToken) != http.StatusOK {
			t.Error("revoke by access token")
		}
		if status, _, _ := oauthtest.ReadRoster(t, e.base, tok2.AccessToken); status != http.StatusUnauthorized {
			t.Errorf("access token revoked by itself: %d", status)
		}
	})
}

// TestConfidentialClient: a DCR client without token_endpoint_auth_method gets a secret
// (RFC 7591's default client_secret_basic) and must present it.
func TestConfidentialClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	status, out := oauthtest.Register(t, e.base, map[string]any{"client_name": "n8n", "redirect_uris": []string{"https://n8n.example/rest/oauth2-credential/callback"}})
	if status != http.StatusCreated || out["client_secret"] == nil || out["token_endpoint_auth_method"] != "client_secret_basic" || out["application_type"] != "web" {
		t.Fatalf("register: %d %v", status, out)
	}
	c := oauthtest.Client{ID: out["client_id"].(string), Secret: out["client_secret"].(string), RedirectURI: "https://n8n.example/rest/oauth2-credential/callback"}
	code, verifier := e.code(t, c, seed.DemoAdminEmail, "roster:read")
	bad := c
	bad.Secret = "wrong"
	if r := oauthtest.Exchange(t, e.base, bad, code, verifier); r.Status != http.StatusUnauthorized || r.Error != "invalid_client" {
		t.Errorf("wrong secret: %d %s", r.Status, r.Error)
	}
	noSecret := c
	noSecret.Secret = ""
	if r := oauthtest.Exchange(t, e.base, noSecret, code, verifier); r.Status != http.StatusUnauthorized || r.Error != "invalid_client" {
		t.Errorf("no secret: %d %s", r.Status, r.Error)
	}
	if r := oauthtest.Exchange(t, e.base, c, code, verifier); r.Status != http.StatusOK {
		t.Errorf("right secret: %d %s", r.Status, r.Error)
	}
}

func rawToken(t *testing.T, base, contentType, body string) oauthtest.TokenResponse {
	t.Helper()
	resp, err := http.Post(base+"/token", contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error       string `json:"error"`
		AccessToken string `json:"access_token"`
	}
	_ = jsonDecode(resp, &out)
	return oauthtest.TokenResponse{Status: resp.StatusCode, Header: resp.Header, Error: out.Error, AccessToken: out.AccessToken}
}

func revoke(t *testing.T, base, clientID, token string) int {
	t.Helper()
	resp, err := http.PostForm(base+"/revoke", url.Values{"token": {token}, "client_id": {clientID}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestCodesAlwaysCarryAChallenge is O05 at its root: a code without an S256 challenge cannot
// exist, so no verifier can ever be accepted for a request that had none (the schema refuses
// the row; /authorize refuses the request, see TestAuthorizeRefusals).
func TestCodesAlwaysCarryAChallenge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	for _, challenge := range []string{"", "plain-verifier", strings.Repeat("a", 42)} {
		_, err := e.st.Pool().Exec(t.Context(), `INSERT INTO oauth_codes (code_hash, client_id, redirect_uri, code_challenge, resource,
			scopes, openid, user_id, church_id, role, auth_time, amr, expires_at)
			VALUES (sha256('x'::bytea), 'c', 'http://127.0.0.1/cb', $1, 'r', '{}', false, $2, $3, 'ADMIN', now(), 'pwd', now())`,
			challenge, seed.DemoAdminID, seed.DemoChurchID)
		if err == nil || !strings.Contains(err.Error(), "oauth_codes_code_challenge_check") {
			t.Errorf("a code with challenge %q was stored: %v", challenge, err)
		}
	}
}
