package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestUpstreamOnly is provider-only login (--upstream-only): the login page offers only the
// provider, a local password (a correct one) is refused, the hand-off to the provider still
// works; with the provider's client secret missing, /authorize answers 503 instead of falling
// back to local logins. Without Only, passwords work as before.
func TestUpstreamOnly(t *testing.T) {
	t.Parallel()
	idp := newEnv(t, oauth.Options{})
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 20, Months: 1})
	upstream := func(only bool, secret string) oauth.Options {
		return oauth.Options{Upstream: &oauth.Upstream{Issuer: idp.base, ClientID: "neemias-login", ClientSecret: secret, Name: "Conta da Igreja", Only: only}}
	}
	cases := []struct {
		name string
		opts oauth.Options
		// authorize is /authorize's status (302 to the login page when it can proceed);
		// password, a correct password login's (303 to consent when allowed); form, whether
		// the login page has a password form.
		authorize, password int
		form                bool
	}{
		{"provider and passwords", upstream(false, "s3cret"), http.StatusFound, http.StatusSeeOther, true},
		{"provider only", upstream(true, "s3cret"), http.StatusFound, http.StatusForbidden, false},
		{"provider only, client secret missing", upstream(true, ""), http.StatusServiceUnavailable, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvOn(t, st, "", tc.opts)
			c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")
			_, challenge := oauthtest.NewPKCE()
			b := oauthtest.NewBrowser(t)
			before := e.count(`SELECT count(*) FROM oauth_auth_requests`)
			p := b.Get(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", State: "s", Challenge: challenge}.URL(e.base))
			if p.Status != tc.authorize {
				t.Fatalf("/authorize: %d %q %s, want %d", p.Status, p.Location, oauthtest.Snippet(p.Body), tc.authorize)
			}
			if tc.authorize == http.StatusServiceUnavailable {
				noRedirect(t, p, http.StatusServiceUnavailable)
				if n := e.count(`SELECT count(*) FROM oauth_auth_requests`) - before; n != 0 {
					t.Errorf("%d authorization requests stored while login is impossible", n)
				}
				if !strings.Contains(e.logs.String(), "client secret is not configured") {
					t.Error("no actionable log line about the missing client secret")
				}
				return
			}
			login := b.Get(p.Location)
			if got := strings.Contains(login.Body, `name="password"`); got != tc.form {
				t.Errorf("password form on the login page: %v, want %v", got, tc.form)
			}
			if !strings.Contains(login.Body, `id="login-upstream"`) {
				t.Error("the login page does not offer the provider")
			}
			id, csrf := oauthtest.Hidden(login.Body, "id"), oauthtest.Hidden(login.Body, "csrf")
			pw := b.PostForm(e.base+"/login", url.Values{"id": {id}, "csrf": {csrf}, "email": {seed.DemoAdminEmail}, "password": {seed.DemoPassword}})
			if pw.Status != tc.password {
				t.Fatalf("correct local password: %d %q, want %d", pw.Status, pw.Location, tc.password)
			}
			if tc.password == http.StatusForbidden {
				if n := e.count(`SELECT count(*) FROM oauth_auth_requests WHERE id = $1 AND user_id IS NOT NULL`, id); n != 0 {
					t.Error("the refused password login recorded a user on the request")
				}
				toIdP := b.PostForm(e.base+"/login/upstream", url.Values{"id": {id}, "csrf": {csrf}})
				if toIdP.Status != http.StatusSeeOther || !strings.HasPrefix(toIdP.Location, idp.base+"/authorize?") {
					t.Errorf("to the provider: %d %q", toIdP.Status, toIdP.Location)
				}
			}
		})
	}
}
