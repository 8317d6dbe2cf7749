package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
)

// sessionCookies are the tab's login-session cookies for base.
func sessionCookies(t *testing.T, tab context.Context, base string) []*network.Cookie {
	t.Helper()
	all := value(t, tab, chromedp.Action[[]*network.Cookie](func(ctx context.Context, tg *chromedp.Target) ([]*network.Cookie, error) {
		r, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/"}})
		return r.Cookies, err
	}))
	var out []*network.Cookie
	for _, c := range all {
		if strings.HasSuffix(c.Name, "neemias_session") {
			out = append(out, c)
		}
	}
	return out
}

// TestBrowserLoginSessionStepUp: in headless Chromium, a person logs in once; a step-up for
// a sensitive scope in the same browser goes straight to the consent page (no password
// form), which names the account and lists the new scope; after /logout the password is
// asked again, and an authorization request with a metadata document that redirects shows
// which rule it broke.
func TestBrowserLoginSessionStepUp(t *testing.T) {
	exe := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cb := newCallbackServer(t)
	a := newApp(t)
	d := discover(t, a)
	client := d.register(t, "Agente da igreja", cb.redirectURI)
	br := newBrowser(t, ctx, exe)
	defer br.logOutsideAttempts(t)
	tab, closeTab := chromedp.NewContext(br.ctx, chromedp.WithNewBrowserContext())
	defer closeTab()
	tab, cancelTab := context.WithTimeout(tab, 2*time.Minute)
	defer cancelTab()

	verifier, challenge := oauthtest.NewPKCE()
	run(t, tab, "first connection: log in and approve",
		chromedp.Navigate(d.authorizeURL(client, cb.redirectURI, "roster:read", "s1", challenge)),
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("email"), seed.DemoAdminEmail), chromedp.SendKeys(chromedp.ID("password"), seed.DemoPassword),
		chromedp.Click(chromedp.ID("login-submit")), chromedp.WaitVisible(chromedp.ID("consent-approve")),
		chromedp.Click(chromedp.ID("consent-approve")), chromedp.WaitVisible(chromedp.ID("callback-received")))
	first := d.exchange(t, client, cb.redirectURI, cb.next(t, tab).Get("code"), verifier)
	if !sameScopes(first.Scope, "roster:read") {
		t.Fatalf("first grant %q", first.Scope)
	}
	sess := sessionCookies(t, tab, a.base)
	if len(sess) != 1 || !sess[0].HTTPOnly || sess[0].SameSite != network.CookieSameSiteLax || sess[0].Secure || sess[0].Path != "/" {
		t.Fatalf("session cookie %+v: want one, HttpOnly, SameSite=Lax, Path=/, not Secure on http", sess)
	}

	verifier, challenge = oauthtest.NewPKCE()
	run(t, tab, "step-up: straight to the consent page",
		chromedp.Navigate(d.authorizeURL(client, cb.redirectURI, "roster:read children:read", "s2", challenge)),
		chromedp.WaitVisible(chromedp.ID("consent-approve")))
	if loc := value(t, tab, chromedp.Location()); !strings.HasPrefix(loc, a.base+"/consent?id=") {
		t.Fatalf("step-up landed at %s, want the consent page", loc)
	}
	if value(t, tab, chromedp.Evaluate[bool](`document.getElementById('password') !== null`)) {
		t.Error("the step-up shows a password form")
	}
	if got := value(t, tab, chromedp.Text(chromedp.ID("account"))); !strings.Contains(got, seed.DemoAdminEmail) {
		t.Errorf("the consent page names the account as %q", got)
	}
	listed := value(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#scopes li')].map(li => li.dataset.scope)`))
	if !sameScopes(strings.Join(listed, " "), "roster:read children:read") {
		t.Errorf("consent lists %v", listed)
	}
	run(t, tab, "the LGPD warning is shown and the step-up approved",
		chromedp.WaitVisible(chromedp.ID("lgpd-warning")),
		chromedp.Click(chromedp.ID("consent-approve")), chromedp.WaitVisible(chromedp.ID("callback-received")))
	second := d.exchange(t, client, cb.redirectURI, cb.next(t, tab).Get("code"), verifier)
	if !sameScopes(second.Scope, "roster:read children:read") {
		t.Errorf("step-up grant %q, want the earlier scope and the new one", second.Scope)
	}

	run(t, tab, "log out",
		chromedp.Navigate(a.base+oauth.PathLogout), chromedp.WaitVisible(chromedp.ID("logout-submit")),
		chromedp.Click(chromedp.ID("logout-submit")), chromedp.WaitVisible(chromedp.ID("logout-done")))
	if left := sessionCookies(t, tab, a.base); len(left) != 0 {
		t.Errorf("session cookie after logout: %+v", left)
	}
	_, challenge = oauthtest.NewPKCE()
	run(t, tab, "after logout the password is asked",
		chromedp.Navigate(d.authorizeURL(client, cb.redirectURI, "roster:read", "s3", challenge)),
		chromedp.WaitVisible(chromedp.ID("password")))

	// The CIMD error page as a person sees it.
	_, challenge = oauthtest.NewPKCE()
	run(t, tab, "a metadata document that is not https",
		chromedp.Navigate(d.authorizeURL("http://clients.example.com/app.json", cb.redirectURI, "roster:read", "s4", challenge)),
		chromedp.WaitVisible(chromedp.ID("error-message")))
	if got := value(t, tab, chromedp.Text(chromedp.ID("error-message"))); !strings.Contains(got, "sem https") || !strings.Contains(got, "without https") {
		t.Errorf("CIMD error page reads %q", got)
	}
}
