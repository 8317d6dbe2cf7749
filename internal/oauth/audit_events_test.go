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

// TestOAuthEventsAudited: the authorization server's events are in the append-only audit log
// (capability "oauth"), with the church, user and client when known, and the grant as
// target: grants, consents approved and denied, refreshes, refresh-token reuse, revocation,
// login failures.
func TestOAuthEventsAudited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")

	tok, _ := e.grant(t, c, seed.DemoAdminEmail, "roster:read")
	if ref := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, nil); ref.Status != http.StatusOK {
		t.Fatalf("refresh: %+v", ref)
	}
	if reuse := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, nil); reuse.Status != http.StatusBadRequest {
		t.Fatalf("reuse: %+v", reuse)
	}
	tok2, _ := e.grant(t, c, seed.DemoAdminEmail, "roster:read")
	resp, err := http.PostForm(e.base+"/revoke", url.Values{"token": {tok2.RefreshToken}, "client_id": {c.ID}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	_, challenge := oauthtest.NewPKCE()
	req := oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", State: "s", Challenge: challenge}
	oauthtest.NewBrowser(t).Authorize(req, e.bases(), seed.DemoAdminEmail, seed.DemoPassword, "deny")
	b := oauthtest.NewBrowser(t)
	login := b.Get(b.Get(req.URL(e.base)).Location)
	bad := b.PostForm(e.base+"/login", url.Values{"id": {oauthtest.Hidden(login.Body, "id")}, "csrf": {oauthtest.Hidden(login.Body, "csrf")},
		"email": {seed.DemoAdminEmail}, "password": {"wrong"}})
	if bad.Status != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", bad.Status)
	}

	for _, tc := range []struct {
		action, outcome string
		n               int
		withUser        bool
	}{
		{"grant.created", "allowed", 2, true},
		{"consent.approved", "allowed", 2, true},
		{"consent.denied", "denied", 1, true},
		{"token.refreshed", "allowed", 1, true},
		{"refresh.reused", "denied", 1, true},
		{"grant.revoked", "allowed", 1, false}, // revoked by refresh token: the grant and client only
		{"login.failed", "denied", 1, false},   // no account is named: an email is personal data
	} {
		n := e.count(`SELECT count(*) FROM audit_log WHERE capability = 'oauth' AND action = $1 AND outcome = $2 AND client_id = $3`, tc.action, tc.outcome, c.ID)
		if n != tc.n {
			t.Errorf("audit %s/%s: %d entries, want %d", tc.action, tc.outcome, n, tc.n)
		}
		if tc.withUser {
			if m := e.count(`SELECT count(*) FROM audit_log WHERE action = $1 AND client_id = $2 AND user_id = $3 AND church_id = $4`,
				tc.action, c.ID, seed.DemoAdminID, seed.DemoChurchID); m != tc.n {
				t.Errorf("audit %s: %d entries name the user and church, want %d", tc.action, m, tc.n)
			}
		}
	}
	if n := e.count(`SELECT count(*) FROM audit_log WHERE capability = 'oauth' AND action IN ('grant.created','token.refreshed','refresh.reused','grant.revoked') AND cardinality(target_ids) <> 1`); n != 0 {
		t.Errorf("%d grant events without their grant as target", n)
	}
	if strings.Contains(e.logs.String(), "an authorization-server event was not recorded") {
		t.Errorf("an audit insert failed: %s", e.logs.String())
	}
}
