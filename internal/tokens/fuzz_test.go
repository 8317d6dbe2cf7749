package tokens_test

import (
	"context"
	"crypto/rsa"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/tokens"
)

// FuzzVerify: token parsing never panics, refuses every input but the tokens the key signed
// with ErrInvalidToken, and a token it accepts yields exactly the principal it was minted for.
func FuzzVerify(f *testing.F) {
	k, err := tokens.GenerateKey()
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	want := principal.Principal{UserID: uuid.MustParse("00000000-0000-4000-8000-000000000001"), ChurchID: uuid.MustParse("00000000-0000-4000-8000-000000000002"),
		Role: "VOLUNTARIO", Scopes: capability.NewScopeSet("roster:read"), ClientID: "c"}
	m := tokens.Minter{Issuer: issuer, Audience: resource, Key: k, Now: func() time.Time { return now }}
	good, err := m.Mint(want, time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	parts := strings.Split(good, ".")
	for _, s := range []string{good, "", ".", "..", "a.b.c", parts[0] + "." + parts[1] + ".", parts[0] + ".." + parts[2],
		"eyJhbGciOiJub25lIn0." + parts[1] + ".", good + "=", strings.ToUpper(good), parts[1] + "." + parts[0] + "." + parts[2],
		`{"payload":"x","signatures":[]}`} {
		f.Add(s)
	}
	v := &tokens.Verifier{Issuer: issuer, Audiences: []string{resource}, Now: func() time.Time { return now },
		Keys: func(_ context.Context, kid string) (*rsa.PublicKey, error) {
			if kid != k.ID {
				return nil, nil
			}
			return &k.Private.PublicKey, nil
		}}
	f.Fuzz(func(t *testing.T, tok string) {
		p, err := v.Verify(context.Background(), tok)
		if err != nil {
			if !errors.Is(err, authn.ErrInvalidToken) {
				t.Fatalf("refused without ErrInvalidToken: %v", err)
			}
			return
		}
		if p.UserID != want.UserID || p.ChurchID != want.ChurchID || p.Role != want.Role || p.ClientID != want.ClientID || p.Scopes.String() != want.Scopes.String() {
			t.Fatalf("accepted %q as %+v", tok, p)
		}
	})
}
