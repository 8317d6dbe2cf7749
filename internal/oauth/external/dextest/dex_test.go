package dextest_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth/external/dextest"
)

// TestDexTokensShape pins what the resource server and the docs rely on about Dex's tokens:
// JWT access tokens, no scope claim, aud the client id (or the cross-client audience), groups
// in "groups", sub the base64url protobuf of user id and connector, an http issuer on loopback.
func TestDexTokensShape(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs Dex")
	}
	user := dextest.User{Email: "secretaria@igreja.example", Username: "secretaria", UserID: "08a8684b-db88-4b73-90a9-3cd1661f5466", Password: "senha-forte-1", Groups: []string{"neemias-admins"}}
	mcp := dextest.Client{ID: "neemias-mcp", Name: "Neemias MCP", Public: true, TrustedPeers: []string{"scripts"}}
	scripts := dextest.Client{ID: "scripts", Secret: "scripts-secret", Name: "scripts", RedirectURIs: []string{"http://127.0.0.1:1/cb"}}
	d := dextest.Start(t, dextest.Config{Clients: []dextest.Client{mcp, scripts}, Users: []dextest.User{user}})
	if !strings.HasPrefix(d.Issuer, "http://127.0.0.1:") {
		t.Fatalf("issuer %s", d.Issuer)
	}
	claims := func(tok string) map[string]any {
		parts := strings.Split(tok, ".")
		if len(parts) != 3 {
			t.Fatalf("not a JWT: %q", tok)
		}
		b, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var c map[string]any
		_ = json.Unmarshal(b, &c)
		return c
	}
	tok := d.PasswordToken(t, scripts, user.Email, user.Password, "openid groups audience:server:client_id:neemias-mcp")
	if tok.Status != http.StatusOK {
		t.Fatalf("password grant: %+v", tok)
	}
	c := claims(tok.AccessToken)
	t.Logf("Dex access token claims (cross-client): %v", c)
	if c["sub"] != user.Subject() || c["iss"] != d.Issuer || c["scope"] != nil || !slices.Contains(toStrings(c["aud"]), "neemias-mcp") ||
		!slices.Contains(toStrings(c["groups"]), "neemias-admins") {
		t.Errorf("claims %v", c)
	}
	own := d.AuthorizationCode(t, mcp, "http://127.0.0.1:8976/oauth/callback", "openid groups", user.Email, user.Password, nil)
	if own.Status != http.StatusOK {
		t.Fatalf("authorization code as the public client: %+v", own)
	}
	c = claims(own.AccessToken)
	t.Logf("Dex access token claims (public client): %v", c)
	if !slices.Contains(toStrings(c["aud"]), "neemias-mcp") || c["sub"] != user.Subject() {
		t.Errorf("claims %v", c)
	}
}

func toStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			s, _ := e.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}
