package oauth_test

import (
	"context"
	"testing"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestUpstreamIssuerSpellings: a link made with a trailing slash is found by a token whose iss
// has none, and the other way round.
func TestUpstreamIssuerSpellings(t *testing.T) {
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 10, Months: 1})
	ctx := context.Background()
	if err := oauth.LinkUpstreamIdentity(ctx, st, "https://idp.example/", "sub-1", seed.DemoChurchID, seed.DemoAdminID); err != nil {
		t.Fatal(err)
	}
	for _, iss := range []string{"https://idp.example", "https://idp.example/"} {
		u, err := db.New(st.Pool()).OAuthUpstreamIdentity(ctx, db.OAuthUpstreamIdentityParams{Issuer: oauth.NormalizeIssuer(iss), Subject: "sub-1"})
		if err != nil || u.ID != seed.DemoAdminID {
			t.Errorf("lookup with iss %q: user %v, err %v", iss, u.ID, err)
		}
	}
}
