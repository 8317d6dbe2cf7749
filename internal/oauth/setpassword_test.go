package oauth_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/password"
	"github.com/neemias/neemias-mcp/internal/seed"
)

// setPasswordPage drives /set-password like a browser: the link, then the form.
type setPasswordPage struct {
	t    *testing.T
	e    *env
	b    *oauthtest.Browser
	Form oauthtest.Page
}

func (e *env) openLink(t *testing.T, b *oauthtest.Browser, link string) setPasswordPage {
	t.Helper()
	return setPasswordPage{t: t, e: e, b: b, Form: b.Get(link)}
}

// submit posts the form it was shown with the two passwords.
func (p setPasswordPage) submit(password, again string) oauthtest.Page {
	p.t.Helper()
	return p.b.PostForm(p.e.base+oauth.PathSetPassword, url.Values{
		"csrf": {oauthtest.Hidden(p.Form.Body, "csrf")}, "code": {oauthtest.Hidden(p.Form.Body, "code")},
		"password": {password}, "password2": {again},
	})
}

// addLocal adds an account to the demo church with its set-password link (at the env's base).
func (e *env) addLocal(t *testing.T, email string) (onboard.User, string, string) {
	t.Helper()
	u, pc, err := onboard.AddLocalUser(context.Background(), e.st, seed.DemoChurchSlug,
		onboard.NewUser{Email: email, Role: "CADASTRO"}, password.DefaultCodeTTL)
	if err != nil {
		t.Fatal(err)
	}
	return u, pc.Code, pc.Link(e.base)
}

func (e *env) hasPassword(t *testing.T, email string) bool {
	t.Helper()
	return e.count(`SELECT count(*) FROM users WHERE email = $1 AND password_hash IS NOT NULL`, email) == 1
}

func pageHeadersOK(t *testing.T, p oauthtest.Page) {
	t.Helper()
	if p.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(p.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
		p.Header.Get("Cache-Control") != "no-store" || p.Header.Get("Referrer-Policy") != "no-referrer" || p.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("page headers: %v", p.Header)
	}
}

const invalidLinkPt = "Este link para definir a senha não vale"

// TestSetPasswordLink: the link of `user add` opens a form (the account's email, no framing,
// no caching), two equal passwords set the password once, the person then logs in through the
// real login form with it, and the link is spent. The code is in no log line.
func TestSetPasswordLink(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	const email = "nova.secretaria@demo.neemias.test"
	u, code, link := e.addLocal(t, email)
	b := oauthtest.NewBrowser(t)
	p := e.openLink(t, b, link)
	if p.Form.Status != http.StatusOK || !strings.Contains(p.Form.Body, email) || !strings.Contains(p.Form.Body, `id="password2"`) ||
		oauthtest.Hidden(p.Form.Body, "code") != code || oauthtest.Hidden(p.Form.Body, "csrf") == "" {
		t.Fatalf("the link's page: %d %s", p.Form.Status, oauthtest.Snippet(p.Form.Body))
	}
	pageHeadersOK(t, p.Form)
	var ck *http.Cookie
	for _, c := range p.Form.Cookies {
		if c.Name == "neemias_setpw" {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Value == code {
		t.Errorf("CSRF cookie %+v", ck)
	}
	done := p.submit("uma senha bem longa", "uma senha bem longa")
	if done.Status != http.StatusOK || !strings.Contains(done.Body, `id="set-password-done"`) || !strings.Contains(done.Body, "entre com o seu e-mail e a nova senha") {
		t.Fatalf("set: %d %s", done.Status, oauthtest.Snippet(done.Body))
	}
	pageHeadersOK(t, done)
	if !e.hasPassword(t, email) {
		t.Fatal("no password stored")
	}

	// The new password logs in through the login form; the token works.
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:4567/cb")
	verifier, challenge := oauthtest.NewPKCE()
	f := oauthtest.NewBrowser(t).Authorize(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", Challenge: challenge},
		e.bases(), email, "uma senha bem longa", "approve")
	tok := oauthtest.Exchange(t, e.base, c, f.Callback.Query().Get("code"), verifier)
	if tok.Status != http.StatusOK {
		t.Fatalf("token: %+v", tok)
	}
	if status, _, body := oauthtest.ReadRoster(t, e.base, tok.AccessToken); status != http.StatusOK {
		t.Errorf("roster with the new account: %d %s", status, oauthtest.Snippet(body))
	}

	// Spent: opening or posting it again is the invalid-link page; nothing changes.
	again := oauthtest.NewBrowser(t)
	if p := again.Get(link); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, invalidLinkPt) {
		t.Errorf("used link: %d %s", p.Status, oauthtest.Snippet(p.Body))
	}
	if p := p.submit("outra senha bem longa", "outra senha bem longa"); p.Status != http.StatusForbidden {
		t.Errorf("the form posted again after success (its cookie is gone): %d %s", p.Status, oauthtest.Snippet(p.Body))
	}
	typed := e.openLink(t, again, e.base+oauth.PathSetPassword)
	if p := again.PostForm(e.base+oauth.PathSetPassword, url.Values{"csrf": {oauthtest.Hidden(typed.Form.Body, "csrf")},
		"code": {code}, "password": {"outra senha bem longa"}, "password2": {"outra senha bem longa"}}); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, invalidLinkPt) {
		t.Errorf("used code posted again: %d %s", p.Status, oauthtest.Snippet(p.Body))
	}

	// A new link (user reset-password) ends the account's sessions when it is used: the
	// earlier token and its refresh token stop working.
	pc, err := onboard.IssuePasswordCode(context.Background(), e.st, seed.DemoChurchSlug, email, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if status, _, _ := oauthtest.ReadRoster(t, e.base, tok.AccessToken); status != http.StatusOK {
		t.Errorf("issuing a link ended the session already: %d", status)
	}
	if p := e.openLink(t, oauthtest.NewBrowser(t), pc.Link(e.base)); p.submit("a terceira senha", "a terceira senha").Status != http.StatusOK {
		t.Fatal("reset link refused")
	}
	if status, _, _ := oauthtest.ReadRoster(t, e.base, tok.AccessToken); status != http.StatusUnauthorized {
		t.Errorf("the token of the old password still works: %d", status)
	}
	if r := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, nil); r.Status != http.StatusBadRequest || r.Error != "invalid_grant" {
		t.Errorf("refresh after the reset: %d %s", r.Status, r.Error)
	}
	if n := e.count(`SELECT count(*) FROM oauth_grants WHERE user_id = $1 AND revoked_reason = 'password_set'`, u.ID); n != 1 {
		t.Errorf("%d grants revoked with reason password_set", n)
	}
	if n := e.count(`SELECT count(*) FROM audit_log WHERE user_id = $1 AND action = 'user.password_link.use' AND outcome = 'allowed'`, u.ID); n != 2 {
		t.Errorf("%d uses audited as the user's, want 2", n)
	}
	for _, secret := range []string{code, pc.Code} {
		if strings.Contains(e.logs.String(), secret) {
			t.Error("a set-password code is in the log")
		}
	}
}

// TestSetPasswordRefusals: every code that cannot be used gets the same page and writes
// nothing; bad passwords, a missing CSRF cookie or token, and unknown methods are refused
// with nothing written.
func TestSetPasswordRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{LoginPerMinute: 6000, LoginBurst: 1000}) // the limit has its own test
	ctx := context.Background()
	i := 0
	fresh := func(t *testing.T) (string, string, string) {
		t.Helper()
		i++
		email := "conta" + string(rune('a'+i)) + "@demo.neemias.test"
		_, code, link := e.addLocal(t, email)
		return email, code, link
	}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, email, code string) string // the code the browser presents
	}{
		{"expired", func(t *testing.T, _, code string) string {
			h := sha256.Sum256([]byte(code))
			e.exec(`UPDATE password_setup_codes SET created_at = now() - interval '4 days', expires_at = now() - interval '1 minute' WHERE code_hash = $1`, h[:])
			return code
		}},
		{"tampered", func(t *testing.T, _, code string) string {
			return code[:20] + map[bool]string{true: "B", false: "A"}[code[20] == 'A'] + code[21:]
		}},
		{"unknown", func(t *testing.T, _, _ string) string { return strings.Repeat("A", 43) }},
		{"garbage", func(t *testing.T, _, _ string) string { return "<script>alert(1)</script>" }},
		{"replaced by reset-password", func(t *testing.T, email, code string) string {
			if _, err := onboard.IssuePasswordCode(ctx, e.st, seed.DemoChurchSlug, email, time.Hour); err != nil {
				t.Fatal(err)
			}
			return code
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			email, code, _ := fresh(t)
			bad := tc.spoil(t, email, code)
			b := oauthtest.NewBrowser(t)
			p := b.Get(e.base + oauth.PathSetPassword + "?" + url.Values{"code": {bad}}.Encode())
			if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, invalidLinkPt) || strings.Contains(p.Body, email) || strings.Contains(p.Body, "<script>") {
				t.Errorf("GET: %d %s", p.Status, oauthtest.Snippet(p.Body))
			}
			pageHeadersOK(t, p)
			// Posting it from the hand-typed form is refused the same way.
			typed := e.openLink(t, b, e.base+oauth.PathSetPassword)
			if !strings.Contains(typed.Form.Body, `id="code"`) {
				t.Fatalf("the page without a code has no code field: %s", oauthtest.Snippet(typed.Form.Body))
			}
			post := b.PostForm(e.base+oauth.PathSetPassword, url.Values{"csrf": {oauthtest.Hidden(typed.Form.Body, "csrf")},
				"code": {bad}, "password": {"uma senha bem longa"}, "password2": {"uma senha bem longa"}})
			if post.Status != http.StatusBadRequest || !strings.Contains(post.Body, invalidLinkPt) || strings.Contains(post.Body, email) {
				t.Errorf("POST: %d %s", post.Status, oauthtest.Snippet(post.Body))
			}
			if e.hasPassword(t, email) {
				t.Error("a refused code set the password")
			}
		})
	}

	t.Run("a typed code works", func(t *testing.T) {
		email, code, _ := fresh(t)
		b := oauthtest.NewBrowser(t)
		typed := e.openLink(t, b, e.base+oauth.PathSetPassword)
		post := b.PostForm(e.base+oauth.PathSetPassword, url.Values{"csrf": {oauthtest.Hidden(typed.Form.Body, "csrf")},
			"code": {" " + code + " "}, "password": {"uma senha bem longa"}, "password2": {"uma senha bem longa"}})
		if post.Status != http.StatusOK || !e.hasPassword(t, email) {
			t.Errorf("typed code: %d %s", post.Status, oauthtest.Snippet(post.Body))
		}
	})

	for _, tc := range []struct {
		name, password, again, want string
	}{
		{"mismatch", "uma senha bem longa", "uma senha bem longA", "As duas senhas não são iguais"},
		{"too short", "curta-9ch", "curta-9ch", "A senha é curta demais: use pelo menos 10 caracteres"},
		{"too long", strings.Repeat("x", 1025), strings.Repeat("x", 1025), "A senha é longa demais"},
		{"empty", "", "", "A senha é curta demais"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			email, code, link := fresh(t)
			p := e.openLink(t, oauthtest.NewBrowser(t), link)
			r := p.submit(tc.password, tc.again)
			if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, tc.want) || !strings.Contains(r.Body, "Nothing was changed") ||
				oauthtest.Hidden(r.Body, "code") != code || !strings.Contains(r.Body, `id="password2"`) {
				t.Errorf("%d %s", r.Status, oauthtest.Snippet(r.Body))
			}
			h := sha256.Sum256([]byte(code))
			if e.hasPassword(t, email) || e.count(`SELECT count(*) FROM password_setup_codes WHERE code_hash = $1 AND used_at IS NULL AND revoked_at IS NULL`, h[:]) != 1 {
				t.Error("a refused password wrote something")
			}
			// The same form, corrected, still works.
			if r := p.submit("uma senha bem longa", "uma senha bem longa"); r.Status != http.StatusOK || !e.hasPassword(t, email) {
				t.Errorf("corrected: %d %s", r.Status, oauthtest.Snippet(r.Body))
			}
		})
	}

	for _, tc := range []struct {
		name string
		post func(t *testing.T, link string) oauthtest.Page
	}{
		{"no cookie", func(t *testing.T, link string) oauthtest.Page {
			p := e.openLink(t, oauthtest.NewBrowser(t), link)
			p.b = oauthtest.NewBrowser(t) // another browser: the form without its cookie
			return p.submit("uma senha bem longa", "uma senha bem longa")
		}},
		{"wrong token", func(t *testing.T, link string) oauthtest.Page {
			b := oauthtest.NewBrowser(t)
			p := e.openLink(t, b, link)
			return b.PostForm(e.base+oauth.PathSetPassword, url.Values{"csrf": {"x" + oauthtest.Hidden(p.Form.Body, "csrf")},
				"code": {oauthtest.Hidden(p.Form.Body, "code")}, "password": {"uma senha bem longa"}, "password2": {"uma senha bem longa"}})
		}},
		{"no token", func(t *testing.T, link string) oauthtest.Page {
			b := oauthtest.NewBrowser(t)
			p := e.openLink(t, b, link)
			return b.PostForm(e.base+oauth.PathSetPassword, url.Values{
				"code": {oauthtest.Hidden(p.Form.Body, "code")}, "password": {"uma senha bem longa"}, "password2": {"uma senha bem longa"}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			email, _, link := fresh(t)
			if r := tc.post(t, link); r.Status != http.StatusForbidden || !strings.Contains(r.Body, "Formulário inválido ou vencido") {
				t.Errorf("%d %s", r.Status, oauthtest.Snippet(r.Body))
			}
			if e.hasPassword(t, email) {
				t.Error("a forged form set the password")
			}
		})
	}

	req, _ := http.NewRequest(http.MethodPut, e.base+oauth.PathSetPassword, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

// TestSetPasswordRateLimit: the page shares the login's per-address limiter.
func TestSetPasswordRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{LoginPerMinute: 1, LoginBurst: 3})
	for i := range 3 {
		if p := oauthtest.NewBrowser(t).Get(e.base + oauth.PathSetPassword + "?code=" + strings.Repeat("A", 43)); p.Status != http.StatusBadRequest {
			t.Fatalf("attempt %d: %d", i+1, p.Status)
		}
	}
	p := oauthtest.NewBrowser(t).Get(e.base + oauth.PathSetPassword + "?code=" + strings.Repeat("B", 43))
	if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
		t.Errorf("4th attempt: %d %v", p.Status, p.Header)
	}
	_, _, link := e.addLocal(t, "limitada@demo.neemias.test")
	if p := oauthtest.NewBrowser(t).Get(link); p.Status != http.StatusTooManyRequests {
		t.Errorf("a good link past the limit: %d", p.Status)
	}
}

// TestSetPasswordUpstreamOnly: with provider-only login there is no local password to set;
// the link is refused and stays unused.
func TestSetPasswordUpstreamOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{Upstream: &oauth.Upstream{Issuer: "https://idp.invalid", ClientID: "neemias-login", ClientSecret: "s3cret", Only: true}})
	const email = "so.provedor@demo.neemias.test"
	_, code, link := e.addLocal(t, email)
	b := oauthtest.NewBrowser(t)
	if p := b.Get(link); p.Status != http.StatusForbidden || strings.Contains(p.Body, `id="password"`) {
		t.Errorf("GET: %d %s", p.Status, oauthtest.Snippet(p.Body))
	}
	if p := b.PostForm(e.base+oauth.PathSetPassword, url.Values{"code": {code}, "password": {"uma senha bem longa"}, "password2": {"uma senha bem longa"}}); p.Status != http.StatusForbidden {
		t.Errorf("POST: %d", p.Status)
	}
	if e.hasPassword(t, email) {
		t.Error("a password was set although login is provider-only")
	}
}
