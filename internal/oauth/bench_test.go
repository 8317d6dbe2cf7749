package oauth_test

import (
	"context"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/tokens"
)

// BenchmarkVerifyAccessToken is the resource server's cost per request for a token of the
// authorization server: signature, claims and scope checks (the public key cached in memory
// after the first use), plus the grant-revocation lookup in PostgreSQL. The "no grant check"
// variant is what a dev token (no grant_id) costs.
func BenchmarkVerifyAccessToken(b *testing.B) {
	e := newEnv(b, oauth.Options{})
	c := oauthtest.RegisterPublic(b, e.base, "http://127.0.0.1:3000/cb")
	resp, _ := e.grant(b, c, seed.DemoAdminEmail, "roster:read")
	tok := resp.AccessToken
	v := &tokens.Verifier{Issuer: e.base, Audiences: []string{e.base + "/mcp"}, Keys: (&tokens.KeyStore{Pool: e.st.Pool()}).Public}
	ctx := context.Background()
	if _, err := v.Verify(ctx, tok); err != nil {
		b.Fatal(err)
	}
	b.Run("signature and claims, no grant check", func(b *testing.B) {
		for b.Loop() {
			if _, err := v.Verify(ctx, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	withGrant := *v
	withGrant.Check = e.srv.AuthServer.CheckToken
	b.Run("with the grant-revocation lookup", func(b *testing.B) {
		for b.Loop() {
			if _, err := withGrant.Verify(ctx, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
}
