package server_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// checkQueries counts the token checks' database lookups (a grant's revocation, a development
// token's user) that go through a pool.
type checkQueries struct{ n atomic.Int64 }

func (c *checkQueries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "-- name: OAuthGrantRevoked ") || strings.Contains(d.SQL, "-- name: OAuthUser ") {
		c.n.Add(1)
	}
	return ctx
}

func (c *checkQueries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestTokenCheckCache: with --token-check-cache, a token that passed its revocation check is
// not looked up again within the TTL; a revocation made by this process refuses it at once,
// one made by another replica within the TTL; with 0, every request looks it up.
func TestTokenCheckCache(t *testing.T) {
	t.Parallel()
	dbURL := storetest.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := seed.Run(ctx, storetest.Pool(t, dbURL), seed.Options{ChildrenPerChurch: 20, Months: 1}); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	counter := &checkQueries{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := store.FromPool(pool)
	t.Cleanup(st.Close)

	for _, tc := range []struct {
		name string
		ttl  time.Duration
		// dev: a development token of user (revoked: the user disabled by SQL, as the `user
		// disable` command does); else an OAuth token of the demo admin, revoked by RFC 7009
		// revocation at this replica ("here") or at another one ("replica").
		dev      bool
		user     demoUser
		revokeAt string
		// checks is the lookups of each request after the first.
		checks int64
		// within is the status right after the revocation; after, after waiting the TTL.
		within, after int
	}{
		{name: "oauth/cached/revoked here", ttl: time.Minute, revokeAt: "here", checks: 0, within: 401},
		{name: "oauth/cached/revoked at a replica", ttl: 1500 * time.Millisecond, revokeAt: "replica", checks: 0, within: 200, after: 401},
		{name: "oauth/off/revoked at a replica", ttl: 0, revokeAt: "replica", checks: 1, within: 401},
		{name: "dev/cached/disabled elsewhere", ttl: 1500 * time.Millisecond, dev: true, user: voluntario, checks: 0, within: 200, after: 401},
		{name: "dev/off/disabled elsewhere", ttl: 0, dev: true, user: cadastro, checks: 1, within: 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAppOn(t, st, server.Config{TokenCheckCache: tc.ttl})
			var tok, revoke string
			var client oauthtest.Client
			if tc.dev {
				all, _ := scopes.RoleScopes(tc.user.role)
				var err error
				tok, err = a.srv.Minter.Mint(principal.Principal{UserID: tc.user.id, ChurchID: seed.DemoChurchID, Role: tc.user.role,
					Scopes: all, ClientID: server.DevTokenClient}, time.Hour)
				if err != nil {
					t.Fatal(err)
				}
			} else {
				client = oauthtest.RegisterPublic(t, a.base, "http://127.0.0.1:3000/cb")
				verifier, challenge := oauthtest.NewPKCE()
				f := oauthtest.NewBrowser(t).Authorize(oauthtest.Request{
					ClientID: client.ID, RedirectURI: client.RedirectURI, Scope: "roster:read", State: "s", Challenge: challenge,
				}, oauthtest.Bases{Authorize: a.base, Login: a.base, Consent: a.base}, seed.DemoAdminEmail, seed.DemoPassword, "approve")
				r := oauthtest.Exchange(t, a.base, client, f.Callback.Query().Get("code"), verifier)
				if r.Status != http.StatusOK {
					t.Fatalf("exchange: %+v", r)
				}
				tok, revoke = r.AccessToken, r.RefreshToken
			}
			read := func() int {
				status, _, _ := oauthtest.ReadRoster(t, a.base, tok)
				return status
			}
			if s := read(); s != http.StatusOK {
				t.Fatalf("first request: %d", s)
			}
			for range 3 {
				before := counter.n.Load()
				if s := read(); s != http.StatusOK {
					t.Fatalf("repeat request: %d", s)
				}
				if got := counter.n.Load() - before; got != tc.checks {
					t.Errorf("a repeat request made %d check lookups, want %d", got, tc.checks)
				}
			}

			switch {
			case tc.dev:
				if _, err := pool.Exec(ctx, `UPDATE users SET disabled_at = now() WHERE id = $1`, tc.user.id); err != nil {
					t.Fatal(err)
				}
			default:
				at := a.base
				if tc.revokeAt == "replica" {
					at = newAppOn(t, st, server.Config{PublicURL: a.base, TokenCheckCache: tc.ttl}).http.URL
				}
				resp, err := http.PostForm(at+"/revoke", url.Values{"token": {revoke}, "client_id": {client.ID}})
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("revoke: %d", resp.StatusCode)
				}
			}
			if s := read(); s != tc.within {
				t.Errorf("right after the revocation: %d, want %d", s, tc.within)
			}
			if tc.after != 0 {
				time.Sleep(tc.ttl + 100*time.Millisecond)
				if s := read(); s != tc.after {
					t.Errorf("after the TTL (%s): %d, want %d", tc.ttl, s, tc.after)
				}
			}
		})
	}
}
