package cimd

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

const testID = "https://client.example.com/meta.json"

func docJSON(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	m := map[string]any{
		"client_id":     testID,
		"client_name":   "Claude",
		"redirect_uris": []string{"https://claude.example.com/api/mcp/auth_callback"},
	}
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jwks(t *testing.T, private bool) map[string]any {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwk := jose.JSONWebKey{Key: k, KeyID: "k1", Algorithm: "ES256", Use: "sig"}
	if !private {
		jwk = jwk.Public()
	}
	b, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk}})
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// TestParseDocument covers checklist C09 and the document half of C01/C02.
func TestParseDocument(t *testing.T) {
	bad := []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"client_id trailing slash", func(m map[string]any) { m["client_id"] = testID + "/" }, "client_id does not equal"},
		{"client_id with :443", func(m map[string]any) { m["client_id"] = "https://client.example.com:443/meta.json" }, "client_id does not equal"},
		{"client_id case", func(m map[string]any) { m["client_id"] = "https://Client.example.com/meta.json" }, "client_id does not equal"},
		{"client_id missing", func(m map[string]any) { delete(m, "client_id") }, "client_id does not equal"},
		{"client_id number", func(m map[string]any) { m["client_id"] = 7 }, `member "client_id" has the wrong type`},
		{"redirect_uris missing", func(m map[string]any) { delete(m, "redirect_uris") }, "redirect_uris missing or empty"},
		{"redirect_uris empty", func(m map[string]any) { m["redirect_uris"] = []string{} }, "redirect_uris missing or empty"},
		{"redirect_uris string", func(m map[string]any) { m["redirect_uris"] = "https://a.example.com/cb" }, "wrong type"},
		{"too many redirect_uris", func(m map[string]any) {
			var r []string
			for range 21 {
				r = append(r, "https://a.example.com/cb")
			}
			m["redirect_uris"] = r
		}, "more than 20"},
		{"javascript redirect", func(m map[string]any) { m["redirect_uris"] = []string{"javascript:alert(1)"} }, `scheme "javascript"`},
		{"mixed-case javascript", func(m map[string]any) { m["redirect_uris"] = []string{"JaVaScRiPt:alert(1)"} }, `scheme "javascript"`},
		{"data redirect", func(m map[string]any) { m["redirect_uris"] = []string{"data:text/html,<script>alert(1)</script>"} }, `scheme "data"`},
		{"file redirect", func(m map[string]any) { m["redirect_uris"] = []string{"file:///etc/passwd"} }, `scheme "file"`},
		{"http non-loopback", func(m map[string]any) { m["redirect_uris"] = []string{"http://evil.example.com/cb"} }, "http is allowed only for loopback"},
		{"second redirect bad", func(m map[string]any) {
			m["redirect_uris"] = []string{"https://ok.example.com/cb", "vbscript:msgbox(1)"}
		}, "redirect_uris[1]"},
		{"client_secret_basic", func(m map[string]any) { m["token_endpoint_auth_method"] = "client_secret_basic" }, "token_endpoint_auth_method"},
		{"client_secret_post", func(m map[string]any) { m["token_endpoint_auth_method"] = "client_secret_post" }, "token_endpoint_auth_method"},
		{"client_secret_jwt", func(m map[string]any) { m["token_endpoint_auth_method"] = "client_secret_jwt" }, "token_endpoint_auth_method"},
		{"client_secret present", func(m map[string]any) { m["client_secret"] = "s3cr3t" }, "client_secret is not allowed"},
		{"private key in jwks", func(m map[string]any) {
			m["token_endpoint_auth_method"] = "private_key_jwt"
			m["jwks"] = jwks(t, true)
		}, "private or symmetric"},
		{"symmetric key in jwks", func(m map[string]any) {
			m["jwks"] = map[string]any{"keys": []any{map[string]any{"kty": "oct", "k": "c2VjcmV0"}}}
		}, "private or symmetric"},
		{"private_key_jwt without keys", func(m map[string]any) { m["token_endpoint_auth_method"] = "private_key_jwt" }, "needs jwks or jwks_uri"},
		{"jwks and jwks_uri", func(m map[string]any) {
			m["jwks"] = jwks(t, false)
			m["jwks_uri"] = "https://client.example.com/jwks.json"
		}, "mutually exclusive"},
		{"password grant", func(m map[string]any) { m["grant_types"] = []string{"authorization_code", "password"} }, `grant type "password"`},
		{"client_credentials", func(m map[string]any) { m["grant_types"] = []string{"client_credentials"} }, "client_credentials"},
		{"implicit", func(m map[string]any) { m["grant_types"] = []string{"implicit"} }, "implicit"},
		{"refresh only", func(m map[string]any) { m["grant_types"] = []string{"refresh_token"} }, "must include authorization_code"},
		{"token response", func(m map[string]any) { m["response_types"] = []string{"token"} }, `response type "token"`},
		{"logo javascript", func(m map[string]any) { m["logo_uri"] = "javascript:alert(1)" }, "logo_uri must be an absolute https URL"},
		{"client_uri http", func(m map[string]any) { m["client_uri"] = "http://client.example.com" }, "client_uri must be"},
		{"jwks_uri http", func(m map[string]any) { m["jwks_uri"] = "http://client.example.com/jwks" }, "jwks_uri must be"},
		{"long name", func(m map[string]any) { m["client_name"] = strings.Repeat("a", 201) }, "client_name longer"},
		{"control in name", func(m map[string]any) { m["client_name"] = "Claude\nApproved by admin" }, "control"},
		{"bidi in name", func(m map[string]any) { m["client_name"] = "Claude\u202egnp.exe" }, "bidi"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseDocument(docJSON(t, tc.edit), testID)
			if !errors.Is(err, ErrInvalidDocument) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("parseDocument = %v, want ErrInvalidDocument containing %q", err, tc.want)
			}
		})
	}
	raw := []struct{ name, body, want string }{
		{"duplicate client_id", `{"client_id":"https://evil.example.com/m.json","client_id":"` + testID + `","redirect_uris":["https://a.example.com/cb"]}`, `duplicate member "client_id"`},
		{"null", `null`, "not a JSON object"},
		{"string", `"x"`, "not a JSON object"},
	}
	for _, tc := range raw {
		if _, err := parseDocument([]byte(tc.body), testID); !errors.Is(err, ErrInvalidDocument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: parseDocument = %v, want %q", tc.name, err, tc.want)
		}
	}

	good := []func(map[string]any){
		nil,
		func(m map[string]any) { delete(m, "client_name") },
		func(m map[string]any) {
			m["redirect_uris"] = []string{"http://127.0.0.1/callback", "http://localhost:33418/cb", "http://[::1]/cb", "cursor://anysphere.cursor-retrieval/oauth/callback", "com.example.app:/oauth2redirect"}
			m["token_endpoint_auth_method"] = "none"
			m["grant_types"] = []string{"authorization_code", "refresh_token"}
			m["response_types"] = []string{"code"}
			m["client_uri"] = "https://client.example.com"
			m["unknown_member"] = map[string]any{"ignored": true}
		},
		func(m map[string]any) {
			m["token_endpoint_auth_method"] = "private_key_jwt"
			m["jwks"] = jwks(t, false)
		},
		func(m map[string]any) {
			m["token_endpoint_auth_method"] = "private_key_jwt"
			m["jwks_uri"] = "https://client.example.com/jwks.json"
		},
		func(m map[string]any) { m["client_name"] = "Ministério Infantil 👶" },
	}
	for i, edit := range good {
		if _, err := parseDocument(docJSON(t, edit), testID); err != nil {
			t.Errorf("good document %d: %v", i, err)
		}
	}
}

// TestValidateRedirectURI is checklist C01 (shared with dynamic client registration).
func TestValidateRedirectURI(t *testing.T) {
	bad := []string{
		"", "javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,x", "vbscript:x", "file:///etc/passwd",
		"blob:https://a.example.com/uuid", "mailto:a@example.com", "about:blank", "view-source:https://a.example.com",
		" https://a.example.com/cb", "\thttps://a.example.com/cb", "\x00https://a.example.com/cb", "\x0bhttps://a.example.com/cb",
		"\x0chttps://a.example.com/cb", "java\tscript:alert(1)", "java\nscript:alert(1)", "https://a.example.com/c\x7fb",
		"https://a.example.com/c\u0085b", "/relative/cb", "cb", "//a.example.com/cb", "https://a.example.com/cb#frag",
		"https://user@a.example.com/cb", "https:///cb", "https:a.example.com/cb", "HTTPS://a.example.com/cb",
		"http://a.example.com/cb", "http://127.0.0.2/cb", "http://localhost.evil.example.com/cb", "http://user@127.0.0.1/cb",
		"https://a.example.com\\@evil.example.com/cb", "com.example.app:", "1app:/cb", "ws://127.0.0.1/cb",
	}
	for _, r := range bad {
		if err := ValidateRedirectURI(r); !errors.Is(err, ErrInvalidRedirectURI) {
			t.Errorf("ValidateRedirectURI(%q) = %v, want refused", r, err)
		}
	}
	good := []string{
		"https://app.example.com/callback", "https://app.example.com:8443/cb?x=1", "http://127.0.0.1/cb",
		"http://127.0.0.1:3000/cb", "http://localhost:6274/oauth/callback", "http://[::1]:8080/cb",
		"com.example.app:/oauth2redirect", "cursor://anysphere.cursor-retrieval/oauth/user-x/callback",
	}
	for _, r := range good {
		if err := ValidateRedirectURI(r); err != nil {
			t.Errorf("ValidateRedirectURI(%q) = %v, want accepted", r, err)
		}
	}
}

func TestIsMetadataURL(t *testing.T) {
	for id, want := range map[string]bool{
		"https://client.example.com/m.json":    true,
		"HTTPS://client.example.com/m.json":    true, // routed to Fetch, which refuses it
		"http://client.example.com/m.json":     false,
		"6f1c0b0e-2d0f-4a8e-9d57-0c4f7b9f1a11": false,
		"":                                     false,
	} {
		if got := IsMetadataURL(id); got != want {
			t.Errorf("IsMetadataURL(%q) = %v", id, got)
		}
	}
}
