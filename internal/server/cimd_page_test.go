package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/cimd"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/server"
)

// TestCIMDErrorPage: an authorization request from a client whose metadata document breaks a
// rule gets an error page (no redirect) naming that rule in Portuguese and English, with the
// real fetcher over real HTTPS; the page never shows the document's body or a resolved
// address, and the log keeps the detail.
func TestCIMDErrorPage(t *testing.T) {
	const canary = "BODY_CANARY_9"
	mux := http.NewServeMux()
	docs := httptest.NewTLSServer(mux)
	t.Cleanup(docs.Close)
	id := func(path string) string { return docs.URL + path }
	jsonDoc := func(doc map[string]any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(doc)
		}
	}
	const redirectURI = "http://127.0.0.1:4567/callback"
	mux.HandleFunc("/redirect.json", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, id("/ok.json"), http.StatusFound) })
	mux.HandleFunc("/big.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":[%q],"x":"%s"}`, id("/big.json"), redirectURI, strings.Repeat(canary, 1000))
	})
	mux.HandleFunc("/invalid.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"client_id": "`+canary)
	})
	mux.HandleFunc("/html.json", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<p>"+canary) })
	mux.HandleFunc("/gone.json", func(w http.ResponseWriter, r *http.Request) { http.Error(w, canary, http.StatusNotFound) })
	mux.HandleFunc("/mismatch.json", jsonDoc(map[string]any{"client_id": id("/mismatch.json") + "/", "redirect_uris": []string{redirectURI}}))
	mux.HandleFunc("/secret.json", jsonDoc(map[string]any{"client_id": id("/secret.json"), "redirect_uris": []string{redirectURI}, "client_secret": canary}))
	mux.HandleFunc("/ok.json", jsonDoc(map[string]any{"client_id": id("/ok.json"), "client_name": "Ok", "redirect_uris": []string{redirectURI}}))
	closed := httptest.NewTLSServer(http.NotFoundHandler())
	unreachable := closed.URL + "/client.json"
	closed.Close()

	pool := docs.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	f, err := server.ClientMetadataFetcher(cimd.Options{AllowLoopbackForTests: true, RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	a := newAppWith(t, server.Config{AuthServer: oauth.Options{ClientMetadata: f}})

	cases := []struct {
		clientID, redirect string
		reason             cimd.Reason
		pt, en             string
	}{
		{clientID: "http://clients.example.com/app.json", reason: cimd.ReasonNotHTTPS, pt: "sem https", en: "without https"},
		{clientID: "https://clients.example.com/", reason: cimd.ReasonBadURL, pt: "não é um endereço aceitável", en: "not an acceptable"},
		{clientID: unreachable, reason: cimd.ReasonUnreachable, pt: "não foi possível obter", en: "could not be retrieved"},
		{clientID: id("/redirect.json"), reason: cimd.ReasonRedirect, pt: "redirecionamento (HTTP 302)", en: "redirect (HTTP 302)"},
		{clientID: id("/gone.json"), reason: cimd.ReasonStatus, pt: "HTTP 404", en: "HTTP 404"},
		{clientID: id("/html.json"), reason: cimd.ReasonContentType, pt: "JSON", en: "JSON"},
		{clientID: id("/big.json"), reason: cimd.ReasonTooLarge, pt: "grande demais", en: "too large"},
		{clientID: id("/invalid.json"), reason: cimd.ReasonInvalidJSON, pt: "objeto JSON válido", en: "valid JSON object"},
		{clientID: id("/mismatch.json"), reason: cimd.ReasonClientIDMismatch, pt: "não é idêntico", en: "not identical"},
		{clientID: id("/secret.json"), reason: cimd.ReasonInvalidMember, pt: "membro &#34;client_secret&#34;", en: "member &#34;client_secret&#34;"},
		{clientID: id("/ok.json"), redirect: "http://127.0.0.1:4567/other", reason: cimd.ReasonRedirectURINotListed, pt: "não consta de redirect_uris", en: "not listed"},
	}
	for _, tc := range cases {
		t.Run(string(tc.reason), func(t *testing.T) {
			ru := tc.redirect
			if ru == "" {
				ru = redirectURI
			}
			_, challenge := oauthtest.NewPKCE()
			p := oauthtest.NewBrowser(t).Get(oauthtest.Request{ClientID: tc.clientID, RedirectURI: ru, Scope: "roster:read", Challenge: challenge}.URL(a.base))
			if p.Status != http.StatusBadRequest || p.Location != "" || !strings.Contains(p.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("want an HTML 400 page without a redirect, got %d %q", p.Status, p.Location)
			}
			for _, want := range []string{`data-reason="` + string(tc.reason) + `"`, tc.pt, tc.en, "Aplicativo não reconhecido", `id="error-client-id"`} {
				if !strings.Contains(p.Body, want) {
					t.Errorf("page lacks %q:\n%s", want, oauthtest.Snippet(p.Body))
				}
			}
			if strings.Contains(p.Body, canary) {
				t.Errorf("the page echoes the document: %s", oauthtest.Snippet(p.Body))
			}
		})
	}
	// The token endpoint names the rule too (invalid_client).
	tok := oauthtest.Exchange(t, a.base, oauthtest.Client{ID: id("/redirect.json"), RedirectURI: redirectURI}, "x", strings.Repeat("v", 43))
	if tok.Status != http.StatusUnauthorized || tok.Error != "invalid_client" || !strings.Contains(tok.ErrorDescription, string(cimd.ReasonRedirect)) {
		t.Errorf("token endpoint: %d %s %q", tok.Status, tok.Error, tok.ErrorDescription)
	}
	if logs := a.logs.String(); !strings.Contains(logs, "redirect (status 302) not followed") || strings.Contains(logs, canary) {
		t.Errorf("the log should keep the detail and never the body")
	}
}
