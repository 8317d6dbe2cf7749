package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
)

// stepUp starts a second authorization request in b (which logged in before) and returns
// the answer of the login page: a 303 to the consent page when the session was used, the
// password form otherwise.
func stepUp(t *testing.T, e *env, b *oauthtest.Browser, c oauthtest.Client, scope string, extra url.Values) oauthtest.Page {
	t.Helper()
	_, challenge := oauthtest.NewPKCE()
	start := b.Get(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: scope, Challenge: challenge, Extra: extra}.URL(e.base))
	if start.Status != http.StatusFound || !strings.Contains(start.Location, "/login?id=") {
		t.Fatalf("authorize: %d %q %s", start.Status, start.Location, oauthtest.Snippet(start.Body))
	}
	return b.Get(start.Location)
}

func sessionCookie(t *testing.T, b *oauthtest.Browser, base string) *http.Cookie {
	t.Helper()
	u, _ := url.Parse(base)
	for _, c := range b.Client.Jar.Cookies(u) {
		if c.Name == "neemias_session" {
			return c
		}
	}
	return nil
}

// TestLoginSessionStepUp: after one login, a step-up in the same browser skips the password
// and still shows the consent page for the new scope; the token then has it.
func TestLoginSessionStepUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:4567/callback")
	b := oauthtest.NewBrowser(t)
	verifier, challenge := oauthtest.NewPKCE()
	f := b.Authorize(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", Challenge: challenge},
		e.bases(), seed.DemoAdminEmail, seed.DemoPassword, "approve")
	if tok := oauthtest.Exchange(t, e.base, c, f.Callback.Query().Get("code"), verifier); tok.Status != http.StatusOK {
		t.Fatalf("first exchange: %d %s", tok.Status, tok.ErrorDescription)
	}
	if sessionCookie(t, b, e.base) == nil {
		t.Fatal("no session cookie after the login")
	}
	if n := e.count(`SELECT count(*) FROM oauth_login_sessions`); n != 1 {
		t.Fatalf("%d session rows, want 1", n)
	}

	verifier, challenge = oauthtest.NewPKCE()
	start := b.Get(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read children:read", Challenge: challenge}.URL(e.base))
	login := b.Get(start.Location)
	if login.Status != http.StatusSeeOther || !strings.Contains(login.Location, "/consent?id=") {
		t.Fatalf("step-up: want the login page to pass to consent, got %d %q %s", login.Status, login.Location, oauthtest.Snippet(login.Body))
	}
	consent := b.Get(login.Location)
	for _, want := range []string{`data-scope="children:read"`, `id="consent-approve"`, `id="account"`, seed.DemoAdminEmail, `id="consent-switch-account"`, scopeText(t, "children:read").WarningPt} {
		if !strings.Contains(consent.Body, want) {
			t.Errorf("step-up consent page lacks %q", want)
		}
	}
	final := b.PostForm(e.base+"/consent", url.Values{"id": {oauthtest.Hidden(consent.Body, "id")}, "csrf": {oauthtest.Hidden(consent.Body, "csrf")}, "action": {"approve"}})
	cb, _ := url.Parse(final.Location)
	tok := oauthtest.Exchange(t, e.base, c, cb.Query().Get("code"), verifier)
	if tok.Status != http.StatusOK || !sameScopes(tok.Scope, "roster:read children:read") {
		t.Fatalf("step-up token: %d scope %q", tok.Status, tok.Scope)
	}
	if n := e.count(`SELECT count(*) FROM audit_log WHERE capability = 'oauth' AND action = 'login_session.use' AND user_id = $1`, seed.DemoAdminID); n != 1 {
		t.Errorf("%d login_session.use audit entries, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM audit_log WHERE capability = 'oauth' AND action = 'login_session.start'`); n != 1 {
		t.Errorf("%d login_session.start audit entries, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM oauth_consents WHERE user_id = $1 AND decision = 'approved'`, seed.DemoAdminID); n != 2 {
		t.Errorf("%d consents recorded, want 2 (one per request)", n)
	}

	// "Not you?": the session ends and the same request asks for a login.
	_, challenge = oauthtest.NewPKCE()
	start = b.Get(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", Challenge: challenge}.URL(e.base))
	login = b.Get(start.Location)
	consent = b.Get(login.Location)
	sw := b.PostForm(e.base+oauth.PathLogout, url.Values{"id": {oauthtest.Hidden(consent.Body, "id")}, "csrf": {oauthtest.Hidden(consent.Body, "csrf")}})
	if sw.Status != http.StatusSeeOther || !strings.Contains(sw.Location, "/login?id=") {
		t.Fatalf("not you: %d %q %s", sw.Status, sw.Location, oauthtest.Snippet(sw.Body))
	}
	if again := b.Get(sw.Location); again.Status != http.StatusOK || !strings.Contains(again.Body, `id="password"`) {
		t.Fatalf("after not you: want the password form, got %d %q", again.Status, again.Location)
	}
	if n := e.count(`SELECT count(*) FROM oauth_login_sessions`); n != 0 {
		t.Errorf("%d session rows after not you, want 0", n)
	}
}

// TestLoginSessionEnds: each way a session ends makes the next authorization request ask for
// the password again; the session row is gone afterwards.
func TestLoginSessionEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:4567/callback")
	newHash, err := store.HashPassword("another password entirely")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		email string
		end   func(b *oauthtest.Browser)
		undo  string
		extra url.Values
	}{
		{name: "logout", email: seed.DemoAdminEmail, end: func(b *oauthtest.Browser) {
			page := b.Get(e.base + oauth.PathLogout)
			if !strings.Contains(page.Body, `id="logout-submit"`) {
				t.Fatalf("logout page lacks the button: %s", oauthtest.Snippet(page.Body))
			}
			done := b.PostForm(e.base+oauth.PathLogout, url.Values{"csrf": {oauthtest.Hidden(page.Body, "csrf")}})
			if done.Status != http.StatusOK || !strings.Contains(done.Body, `id="logout-done"`) {
				t.Fatalf("logout: %d %s", done.Status, oauthtest.Snippet(done.Body))
			}
		}},
		{name: "password changed", email: seed.DemoCadastroEmail, end: func(*oauthtest.Browser) {
			e.exec(`UPDATE users SET password_hash = $1 WHERE id = $2`, newHash, seed.DemoCadastroID)
		}},
		{name: "role changed", email: seed.DemoVoluntarioEmail, end: func(*oauthtest.Browser) {
			e.exec(`UPDATE users SET role = 'RESPONSAVEL' WHERE id = $1`, seed.DemoVoluntarioID)
		}, undo: `UPDATE users SET role = 'VOLUNTARIO' WHERE id = $1`},
		{name: "account disabled", email: seed.DemoResponsavelEmail, end: func(*oauthtest.Browser) {
			e.exec(`UPDATE users SET disabled_at = now() WHERE id = $1`, seed.DemoResponsavelID)
		}, undo: `UPDATE users SET disabled_at = NULL WHERE id = $1`},
		{name: "idle", email: seed.DemoAdminEmail, end: func(*oauthtest.Browser) {
			e.exec(`UPDATE oauth_login_sessions SET idle_expires_at = now() - interval '1 second' WHERE user_id = $1`, seed.DemoAdminID)
		}},
		{name: "absolute lifetime", email: seed.DemoAdminEmail, end: func(*oauthtest.Browser) {
			e.exec(`UPDATE oauth_login_sessions SET created_at = now() - interval '9 hours', idle_expires_at = now() - interval '1 second', expires_at = now() - interval '1 second' WHERE user_id = $1`, seed.DemoAdminID)
		}},
		{name: "prompt=login", email: seed.DemoAdminEmail, end: func(*oauthtest.Browser) {}, extra: url.Values{"prompt": {"login"}}},
		{name: "max_age exceeded", email: seed.DemoAdminEmail, end: func(*oauthtest.Browser) {
			e.exec(`UPDATE oauth_login_sessions SET auth_time = now() - interval '10 minutes' WHERE user_id = $1`, seed.DemoAdminID)
		}, extra: url.Values{"max_age": {"60"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := oauthtest.NewBrowser(t)
			_, challenge := oauthtest.NewPKCE()
			b.Authorize(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", Challenge: challenge},
				e.bases(), tc.email, seed.DemoPassword, "approve")
			tc.end(b)
			page := stepUp(t, e, b, c, "roster:read", tc.extra)
			if page.Status != http.StatusOK || !strings.Contains(page.Body, `id="password"`) {
				t.Errorf("want the password form, got %d %q", page.Status, page.Location)
			}
			if tc.extra == nil {
				if n := e.count(`SELECT count(*) FROM oauth_login_sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1`, tc.email); n != 0 {
					t.Errorf("%d session rows left, want 0", n)
				}
				if ck := sessionCookie(t, b, e.base); ck != nil {
					t.Errorf("the session cookie is still set")
				}
			}
			if tc.undo != "" {
				e.exec(tc.undo, seed.DemoVoluntarioID)
				e.exec(`UPDATE users SET disabled_at = NULL WHERE id = $1`, seed.DemoResponsavelID)
			}
		})
	}
	// A session used within its limits: it works, and each use moves the idle deadline on.
	t.Run("alive", func(t *testing.T) {
		b := oauthtest.NewBrowser(t)
		_, challenge := oauthtest.NewPKCE()
		b.Authorize(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", Challenge: challenge},
			e.bases(), seed.DemoAdminEmail, seed.DemoPassword, "approve")
		e.exec(`UPDATE oauth_login_sessions SET idle_expires_at = now() + interval '5 seconds' WHERE user_id = $1`, seed.DemoAdminID)
		if page := stepUp(t, e, b, c, "roster:read", url.Values{"max_age": {"3600"}}); page.Status != http.StatusSeeOther {
			t.Fatalf("want the session to skip the login, got %d", page.Status)
		}
		if n := e.count(`SELECT count(*) FROM oauth_login_sessions WHERE user_id = $1 AND idle_expires_at > now() + interval '20 minutes'`, seed.DemoAdminID); n != 1 {
			t.Errorf("the idle deadline did not slide (%d rows)", n)
		}
	})
}

// TestLoginSessionOff: with sessions off, a second request asks for the password.
func TestLoginSessionOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{LoginSessionIdle: -1})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:4567/callback")
	b := oauthtest.NewBrowser(t)
	_, challenge := oauthtest.NewPKCE()
	b.Authorize(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", Challenge: challenge},
		e.bases(), seed.DemoAdminEmail, seed.DemoPassword, "approve")
	if page := stepUp(t, e, b, c, "roster:read", nil); page.Status != http.StatusOK || !strings.Contains(page.Body, `id="password"`) {
		t.Errorf("want the password form, got %d", page.Status)
	}
	if n := e.count(`SELECT count(*) FROM oauth_login_sessions`); n != 0 {
		t.Errorf("%d session rows with sessions off", n)
	}
}
