package oauth_test

import (
	"html/template"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
)

var warnedScope = regexp.MustCompile(`<p class="lgpd-warning" data-scope="([^"]+)">`)

// TestConsentWarnsForEverySensitiveScope (issue 24): the consent page carries the LGPD
// warning of every sensitive scope it would grant, worded for that scope, in Portuguese and
// English, as docs/privacy.md promises. Before, only children:read was warned about, so a
// step-up to children:write or guardians:read, which the login session lets through without a
// password, showed no warning at all. Which scopes are sensitive, and the words, are the
// spec's (gen/scopes); a scope the role cannot hold is not granted and not warned about.
func TestConsentWarnsForEverySensitiveScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:4567/callback")
	b := oauthtest.NewBrowser(t)
	_, challenge := oauthtest.NewPKCE()
	b.Authorize(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", Challenge: challenge},
		e.bases(), seed.DemoAdminEmail, seed.DemoPassword, "approve")

	// Each sensitive scope on its own, by step-up: the login session skips the password.
	var sensitive []string
	for _, s := range scopes.All() {
		if !s.Sensitive {
			continue
		}
		sensitive = append(sensitive, s.Name)
		if s.WarningPt == "" || s.WarningEn == "" {
			t.Errorf("sensitive scope %s has no warning in gen/scopes", s.Name)
		}
		login := stepUp(t, e, b, c, "roster:read "+s.Name, nil)
		if login.Status != http.StatusSeeOther || !strings.Contains(login.Location, "/consent?id=") {
			t.Fatalf("step-up for %s asked for the password: %d", s.Name, login.Status)
		}
		page := b.Get(login.Location).Body
		want := `<p class="lgpd-warning" data-scope="` + s.Name + `">` + template.HTMLEscapeString(s.WarningPt) + `</p><p class="en" lang="en">` + template.HTMLEscapeString(s.WarningEn) + `</p>`
		if !strings.Contains(page, want) {
			t.Errorf("step-up for %s: the consent page lacks its LGPD warning %q", s.Name, s.WarningPt)
		}
		if got := warnedScope.FindAllStringSubmatch(page, -1); len(got) != 1 || got[0][1] != s.Name {
			t.Errorf("step-up for %s: warnings shown for %v, want it alone", s.Name, got)
		}
		if i := strings.Index(page, `id="lgpd-warning"`); i < 0 || i > strings.Index(page, `id="consent-approve"`) {
			t.Errorf("step-up for %s: the warning is not above the buttons", s.Name)
		}
	}
	if !slices.Contains(sensitive, scopes.ChildrenWrite) || !slices.Contains(sensitive, scopes.GuardiansRead) {
		t.Fatalf("the spec's sensitive scopes are %v; the finding was about children:write and guardians:read", sensitive)
	}

	// All of them at once: one warning each, in spec order.
	page := b.Get(stepUp(t, e, b, c, "roster:read "+strings.Join(sensitive, " "), nil).Location).Body
	var shown []string
	for _, m := range warnedScope.FindAllStringSubmatch(page, -1) {
		shown = append(shown, m[1])
	}
	if !slices.Equal(shown, sensitive) {
		t.Errorf("all sensitive scopes requested: warnings for %v, want %v", shown, sensitive)
	}
	// None: no warning.
	if page := b.Get(stepUp(t, e, b, c, "roster:read attendance:read", nil).Location).Body; strings.Contains(page, "lgpd-warning") {
		t.Error("no sensitive scope requested, yet a warning is shown")
	}

	// A volunteer cannot hold guardians:read or children:write: nothing of theirs is granted
	// or warned about; health:read, which the role holds, is.
	vb := oauthtest.NewBrowser(t)
	_, challenge = oauthtest.NewPKCE()
	vb.Authorize(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", Challenge: challenge},
		e.bases(), seed.DemoVoluntarioEmail, seed.DemoPassword, "approve")
	page = vb.Get(stepUp(t, e, vb, c, "roster:read guardians:read children:write health:read", nil).Location).Body
	shown = nil
	for _, m := range warnedScope.FindAllStringSubmatch(page, -1) {
		shown = append(shown, m[1])
	}
	if !slices.Equal(shown, []string{scopes.HealthRead}) {
		t.Errorf("a volunteer's consent warns for %v, want only health:read", shown)
	}
}
