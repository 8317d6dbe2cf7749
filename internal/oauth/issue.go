package oauth

import (
	"context"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/crypto"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/tokens"
)

// issue is what a token response is made of.
type issue struct {
	client       *Client
	resource     string // the token's aud: the grant's resource (Config.Resource when empty)
	grant        uuid.UUID
	grantExpires time.Time
	user, church uuid.UUID
	role         string
	scopes       capability.ScopeSet
	refresh      bool
	openid       bool
	nonce        string
	authTime     time.Time
	amr          string
}

// issue mints the access token (RFC 9068, audience the grant's resource, carrying the
// grant id), stores a new refresh token when the client may refresh, and signs an ID token
// when the client asked for openid.
func (a *AS) issue(ctx context.Context, q *db.Queries, key tokens.Key, p issue) (*oidc.AccessTokenResponse, error) {
	aud := p.resource
	if aud == "" {
		aud = a.cfg.Resource
	}
	m := tokens.Minter{Issuer: a.cfg.Issuer, Audience: aud, Key: key, Now: a.now}
	at, err := m.MintGrant(principal.Principal{
		UserID: p.user, ChurchID: p.church, Role: p.role, Scopes: p.scopes, ClientID: p.client.ID,
	}, a.cfg.AccessTokenTTL, p.grant.String())
	if err != nil {
		return nil, err
	}
	resp := &oidc.AccessTokenResponse{
		AccessToken: at, TokenType: oidc.BearerToken, ExpiresIn: uint64(a.cfg.AccessTokenTTL.Seconds()),
		Scope: oidc.SpaceDelimitedArray(p.scopes.List()),
	}
	if p.refresh {
		rt := random(32)
		exp := a.now().Add(a.cfg.RefreshTokenTTL)
		if exp.After(p.grantExpires) {
			exp = p.grantExpires
		}
		if err := q.InsertOAuthRefreshToken(ctx, db.InsertOAuthRefreshTokenParams{TokenHash: hash(rt), GrantID: p.grant, ExpiresAt: exp}); err != nil {
			return nil, err
		}
		resp.RefreshToken = rt
	}
	if p.openid {
		if resp.IDToken, err = a.idToken(key, p, at); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// idToken signs an OpenID Connect ID token: identity only (subject, no personal data), for
// the client (aud = client_id), with typ JWT so it can never pass as an access token.
func (a *AS) idToken(key tokens.Key, p issue, accessToken string) (string, error) {
	now := a.now()
	claims := oidc.NewIDTokenClaims(a.cfg.Issuer, p.user.String(), []string{p.client.ID}, now.Add(IDTokenTTL),
		p.authTime, p.nonce, "", []string{p.amr}, p.client.ID, 0)
	claims.IssuedAt = oidc.FromTime(now)
	atHash, err := oidc.ClaimHash(accessToken, jose.RS256)
	if err != nil {
		return "", err
	}
	claims.AccessTokenHash = atHash
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key.Private, KeyID: key.ID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("ID token signer: %w", err)
	}
	return crypto.Sign(claims, signer)
}
