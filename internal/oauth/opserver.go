package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/oauth/cimd"
	"github.com/neemias/neemias-mcp/internal/tokens"
)

// opServer is our op.Server: the library routes and decodes the requests, validates what it
// can (redirect URI, prompt, scopes, response type, client authentication plumbing, grant
// types) and writes the OAuth errors; these methods do the rest against PostgreSQL. The
// library's own token creation is not used: access tokens are internal/tokens' RFC 9068 JWTs,
// the shape the resource server verifies.
type opServer struct {
	op.UnimplementedServer
	as *AS
}

type clientKey struct{}

// VerifyAuthRequest returns the client the /authorize front handler already resolved and
// whose redirect URI it matched. An empty scope becomes the default.
func (s *opServer) VerifyAuthRequest(ctx context.Context, r *op.Request[oidc.AuthRequest]) (*op.ClientRequest[oidc.AuthRequest], error) {
	c, ok := ctx.Value(clientKey{}).(*Client)
	if !ok || c.ID != r.Data.ClientID {
		return nil, oidc.ErrInvalidRequestRedirectURI().WithDescription("unknown client")
	}
	if len(r.Data.Scopes) == 0 {
		r.Data.Scopes = defaultScopes()
	}
	return &op.ClientRequest[oidc.AuthRequest]{Request: r, Client: c}, nil
}

// defaultScopes is what an authorization request without any of the spec's scopes asks for:
// the non-sensitive scopes, narrowed to the person's role at consent. Child, guardian and
// enrollment data must always be asked for by name.
func defaultScopes() []string {
	var out []string
	for _, s := range scopes.All() {
		if !s.Sensitive {
			out = append(out, s.Name)
		}
	}
	return out
}

// Authorize runs after the library validated the redirect URI, prompt, scopes and response
// type. Failures here are redirected to the (validated) redirect URI with state and iss.
func (s *opServer) Authorize(ctx context.Context, cr *op.ClientRequest[oidc.AuthRequest]) (*op.Redirect, error) {
	a := s.as
	req := cr.Data
	c := cr.Client.(*Client)
	switch {
	case req.ResponseType != oidc.ResponseTypeCode:
		e := oidc.ErrInvalidRequest().WithDescription("only response_type=code is supported")
		e.ErrorType = "unsupported_response_type"
		return nil, e
	case req.ResponseMode != "" && req.ResponseMode != oidc.ResponseModeQuery:
		return nil, oidc.ErrInvalidRequest().WithDescription("only response_mode=query is supported")
	case req.RequestParam != "" || cr.Form.Get("request_uri") != "":
		return nil, oidc.ErrRequestNotSupported()
	case req.CodeChallenge == "":
		return nil, oidc.ErrInvalidRequest().WithDescription("PKCE is required: send code_challenge with code_challenge_method=S256")
	case req.CodeChallengeMethod != oidc.CodeChallengeMethodS256:
		return nil, oidc.ErrInvalidRequest().WithDescription("code_challenge_method must be S256")
	case !validChallenge(req.CodeChallenge):
		return nil, oidc.ErrInvalidRequest().WithDescription("code_challenge must be the 43-character base64url SHA-256 of the verifier")
	case slices.Contains(req.Prompt, oidc.PromptNone):
		return nil, oidc.ErrInteractionRequired().WithDescription("the person must always approve on the consent page; prompt=none cannot be honoured")
	case len(req.State) > 1000 || len(req.Nonce) > 1000:
		return nil, oidc.ErrInvalidRequest().WithDescription("state and nonce are limited to 1000 characters")
	}
	resource, rerr := a.resolveResource(cr.Form["resource"])
	if rerr != nil {
		return nil, rerr
	}
	openid := slices.Contains(req.Scopes, oidc.ScopeOpenID)
	var domain []string
	for _, sc := range req.Scopes {
		if _, ok := scopes.Describe(sc); ok && !slices.Contains(domain, sc) {
			domain = append(domain, sc)
		}
	}
	if len(domain) == 0 && !openid {
		domain = defaultScopes()
	}
	if domain == nil {
		domain = []string{}
	}
	secret := random(32)
	id, err := a.q.InsertOAuthAuthRequest(ctx, db.InsertOAuthAuthRequestParams{
		ClientID: c.ID, ClientName: c.Name, RedirectUri: req.RedirectURI,
		State: optional(req.State), Nonce: optional(req.Nonce), Scopes: domain, Openid: openid,
		CodeChallenge: req.CodeChallenge, Resource: resource, BrowserHash: hash(secret),
		ExpiresAt: a.now().Add(AuthRequestTTL),
		// prompt=login and max_age=0 ask for the password even with a login session.
		ForceLogin: slices.Contains(req.Prompt, oidc.PromptLogin) || req.MaxAge != nil && *req.MaxAge == 0,
		MaxAge:     maxAge(req.MaxAge),
	})
	if err != nil {
		a.log.ErrorContext(ctx, "storing an authorization request", "error", err)
		return nil, oidc.ErrServerError().WithDescription("the request could not be stored; try again")
	}
	a.maybePurge(ctx)
	red := op.NewRedirect(a.cfg.Issuer + PathLogin + "?id=" + id.String())
	red.Header.Add("Set-Cookie", a.bindingCookie(id, secret, AuthRequestTTL).String())
	return red, nil
}

// VerifyClient authenticates the client at the token and revocation endpoints: public
// clients by their client_id alone (PKCE protects their codes), confidential ones by their
// secret, in the Basic header or the form.
func (s *opServer) VerifyClient(ctx context.Context, r *op.Request[op.ClientCredentials]) (op.Client, error) {
	cc := r.Data
	if cc.ClientAssertion != "" {
		return nil, op.NewStatusError(oidc.ErrInvalidClient().WithDescription("client assertions are not supported"), http.StatusUnauthorized)
	}
	c, err := s.as.lookupClient(ctx, cc.ClientID)
	if errors.Is(err, errUnknownClient) {
		desc := "unknown client"
		if e, ok := cimd.ReasonOf(err); ok {
			desc = "client metadata document refused: " + string(e.Reason)
		}
		return nil, op.NewStatusError(oidc.ErrInvalidClient().WithDescription("%s", desc), http.StatusUnauthorized)
	}
	if err != nil {
		s.as.log.ErrorContext(ctx, "loading a client", "error", err)
		return nil, oidc.ErrServerError()
	}
	if c.Method != "none" {
		if cc.ClientSecret == "" || subtle.ConstantTimeCompare(hash(cc.ClientSecret), c.secretHash) != 1 {
			return nil, op.NewStatusError(oidc.ErrInvalidClient().WithDescription("client authentication failed"), http.StatusUnauthorized)
		}
	}
	return c, nil
}

// CodeExchange redeems an authorization code (single use, 60 seconds, bound to client,
// redirect URI, PKCE challenge and resource). Checks that a legitimate client can fail (wrong
// client, redirect URI, verifier, resource) come before the single-use check, so a replay with
// wrong parameters changes nothing; a replay that passes them revokes the grant the code
// created, which refuses its refresh and access tokens from then on.
func (s *opServer) CodeExchange(ctx context.Context, r *op.ClientRequest[oidc.AccessTokenRequest]) (*op.Response, error) {
	a := s.as
	c := r.Client.(*Client)
	if !validVerifier(r.Data.CodeVerifier) {
		return nil, oidc.ErrInvalidRequest().WithDescription("code_verifier is required: 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
	}
	return s.tokenResponse(ctx, func(q *db.Queries, key tokens.Key) (*oidc.AccessTokenResponse, error) {
		code, err := q.LockOAuthCode(ctx, hash(r.Data.Code))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, oidc.ErrInvalidGrant().WithDescription("unknown authorization code")
		}
		if err != nil {
			return nil, err
		}
		switch {
		case code.ClientID != c.ID:
			return nil, oidc.ErrInvalidGrant().WithDescription("the code was issued to another client")
		case code.RedirectUri != r.Data.RedirectURI:
			return nil, oidc.ErrInvalidGrant().WithDescription("redirect_uri does not match the authorization request")
		case subtle.ConstantTimeCompare([]byte(oidc.NewSHACodeChallenge(r.Data.CodeVerifier)), []byte(code.CodeChallenge)) != 1:
			return nil, oidc.ErrInvalidGrant().WithDescription("PKCE verification failed")
		}
		if err := a.checkResource(r.Form["resource"], code.Resource); err != nil {
			return nil, err
		}
		if code.UsedAt != nil {
			if code.GrantID != nil {
				if _, err := q.RevokeOAuthGrant(ctx, db.RevokeOAuthGrantParams{ID: *code.GrantID, Reason: "code_replay"}); err != nil {
					return nil, err
				}
				if err := auditEvent(ctx, q, code.ChurchID, code.UserID, c.ID, auditCodeReplayed, audit.Denied, *code.GrantID); err != nil {
					return nil, err
				}
			}
			a.log.WarnContext(ctx, "authorization code replayed; the tokens issued for it are revoked", "client_id", c.ID)
			return nil, commitWith{err: oidc.ErrInvalidGrant().WithDescription("the code was already used; the tokens issued for it are revoked"), revoked: grantOf(code.GrantID)}
		}
		if code.Expired {
			return nil, oidc.ErrInvalidGrant().WithDescription("the code has expired")
		}
		user, err := q.OAuthUser(ctx, code.UserID)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && (user.DisabledAt != nil || user.ChurchID != code.ChurchID) {
			return nil, oidc.ErrInvalidGrant().WithDescription("the account is not active")
		}
		if err != nil {
			return nil, err
		}
		granted := scopes.Grant(user.Role, capability.NewScopeSet(code.Scopes...))
		expires := a.now().Add(a.cfg.GrantTTL)
		grantID, err := q.InsertOAuthGrant(ctx, db.InsertOAuthGrantParams{
			ClientID: c.ID, UserID: user.ID, ChurchID: user.ChurchID, Scopes: list(granted),
			Resource: code.Resource, AuthTime: code.AuthTime, ExpiresAt: expires,
		})
		if err != nil {
			return nil, err
		}
		if err := q.UseOAuthCode(ctx, db.UseOAuthCodeParams{CodeHash: code.CodeHash, GrantID: &grantID}); err != nil {
			return nil, err
		}
		if err := auditEvent(ctx, q, user.ChurchID, user.ID, c.ID, auditGrantCreated, audit.Allowed, grantID); err != nil {
			return nil, err
		}
		if !c.FromMetadataDocument {
			if err := q.TouchOAuthClient(ctx, c.ID); err != nil {
				return nil, err
			}
		}
		return a.issue(ctx, q, key, issue{
			client: c, resource: code.Resource, grant: grantID, grantExpires: expires, user: user.ID, church: user.ChurchID, role: user.Role,
			scopes: granted, refresh: c.allowsRefresh(), openid: code.Openid, nonce: deref(code.Nonce),
			authTime: code.AuthTime, amr: code.Amr,
		})
	})
}

// RefreshToken rotates a refresh token: the presented one is spent and a new one issued in
// the same grant. A spent token presented again means two parties hold it: the whole grant is
// revoked. Scopes can only narrow (requested ⊆ granted, else invalid_scope), are capped by the
// person's current role, and the grant keeps its original scopes for later refreshes.
func (s *opServer) RefreshToken(ctx context.Context, r *op.ClientRequest[oidc.RefreshTokenRequest]) (*op.Response, error) {
	a := s.as
	c := r.Client.(*Client)
	return s.tokenResponse(ctx, func(q *db.Queries, key tokens.Key) (*oidc.AccessTokenResponse, error) {
		rt, err := q.LockOAuthRefreshToken(ctx, hash(r.Data.RefreshToken))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, oidc.ErrInvalidGrant().WithDescription("unknown refresh token")
		}
		if err != nil {
			return nil, err
		}
		switch {
		case rt.ClientID != c.ID:
			return nil, oidc.ErrInvalidGrant().WithDescription("the refresh token was issued to another client")
		case rt.RevokedAt != nil:
			return nil, oidc.ErrInvalidGrant().WithDescription("the grant has been revoked")
		case rt.RotatedAt != nil:
			if _, err := q.RevokeOAuthGrant(ctx, db.RevokeOAuthGrantParams{ID: rt.GrantID, Reason: "refresh_reuse"}); err != nil {
				return nil, err
			}
			if err := auditEvent(ctx, q, rt.ChurchID, rt.UserID, c.ID, auditRefreshReused, audit.Denied, rt.GrantID); err != nil {
				return nil, err
			}
			a.log.WarnContext(ctx, "refresh token reused; its grant is revoked", "client_id", c.ID)
			return nil, commitWith{err: oidc.ErrInvalidGrant().WithDescription("the refresh token was already used; the grant is revoked"), revoked: rt.GrantID}
		case rt.Expired || rt.GrantExpired:
			return nil, oidc.ErrInvalidGrant().WithDescription("the refresh token has expired")
		}
		if err := a.checkResource(r.Form["resource"], rt.Resource); err != nil {
			return nil, err
		}
		requested := capability.NewScopeSet(rt.Scopes...)
		var asked []string
		for _, sc := range r.Data.Scopes {
			if sc != oidc.ScopeOpenID && sc != oidc.ScopeOfflineAccess {
				asked = append(asked, sc)
			}
		}
		if len(asked) > 0 {
			for _, sc := range asked {
				if !slices.Contains(rt.Scopes, sc) {
					return nil, oidc.ErrInvalidScope().WithDescription("scope %q was not granted; a refresh can only narrow the scopes", sc)
				}
			}
			requested = capability.NewScopeSet(asked...)
		}
		user, err := q.OAuthUser(ctx, rt.UserID)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && (user.DisabledAt != nil || user.ChurchID != rt.ChurchID) {
			if _, err := q.RevokeOAuthGrant(ctx, db.RevokeOAuthGrantParams{ID: rt.GrantID, Reason: "user_disabled"}); err != nil {
				return nil, err
			}
			if err := auditEvent(ctx, q, rt.ChurchID, rt.UserID, c.ID, auditRefreshDisabled, audit.Denied, rt.GrantID); err != nil {
				return nil, err
			}
			return nil, commitWith{err: oidc.ErrInvalidGrant().WithDescription("the account is not active"), revoked: rt.GrantID, user: rt.UserID}
		}
		if err != nil {
			return nil, err
		}
		if err := q.RotateOAuthRefreshToken(ctx, rt.TokenHash); err != nil {
			return nil, err
		}
		if err := auditEvent(ctx, q, user.ChurchID, user.ID, c.ID, auditTokenRefreshed, audit.Allowed, rt.GrantID); err != nil {
			return nil, err
		}
		return a.issue(ctx, q, key, issue{
			client: c, resource: rt.Resource, grant: rt.GrantID, grantExpires: rt.GrantExpiresAt, user: user.ID, church: user.ChurchID,
			role: user.Role, scopes: scopes.Grant(user.Role, requested), refresh: true,
		})
	})
}

// tokenResponse runs one token exchange: it loads the signing key, lets exchange issue the
// tokens in one transaction and answers with them, or with the error tokenError maps.
func (s *opServer) tokenResponse(ctx context.Context, exchange func(q *db.Queries, key tokens.Key) (*oidc.AccessTokenResponse, error)) (*op.Response, error) {
	a := s.as
	key, err := a.signingKey(ctx)
	if err != nil {
		a.log.ErrorContext(ctx, "loading the signing key", "error", err)
		return nil, oidc.ErrServerError()
	}
	var resp *oidc.AccessTokenResponse
	err = a.inTx(ctx, func(q *db.Queries) error {
		var err error
		resp, err = exchange(q, key)
		return err
	})
	if err != nil {
		return nil, s.tokenError(ctx, err)
	}
	return op.NewResponse(resp), nil
}

// checkResource checks a token request's resource parameters, if it has any, against the
// resource the code or grant was authorized for.
func (a *AS) checkResource(values []string, authorized string) error {
	if len(values) == 0 {
		return nil
	}
	res, rerr := a.resolveResource(values)
	if rerr != nil {
		return rerr
	}
	if res != authorized {
		return oidc.ErrInvalidTarget().WithDescription("the resource differs from the authorized one")
	}
	return nil
}

// Revocation (RFC 7009) revokes the grant of a refresh token or of one of our access tokens
// presented by the client it was issued to. It answers 200 whatever the token was.
func (s *opServer) Revocation(ctx context.Context, r *op.ClientRequest[oidc.RevocationRequest]) (*op.Response, error) {
	a := s.as
	c := r.Client.(*Client)
	var grant, church, user uuid.UUID
	g, err := a.q.OAuthGrantOfRefreshToken(ctx, hash(r.Data.Token))
	switch {
	case err == nil:
		if g.ClientID == c.ID {
			grant = g.ID
		}
	case errors.Is(err, pgx.ErrNoRows):
		if cl := a.accessTokenClaims(ctx, r.Data.Token); cl != nil && cl.ClientID == c.ID {
			grant, _ = uuid.Parse(cl.GrantID)
			church, _ = uuid.Parse(cl.ChurchID)
			user, _ = uuid.Parse(cl.Subject)
		}
	default:
		a.log.ErrorContext(ctx, "revocation lookup", "error", err)
		return nil, oidc.ErrServerError()
	}
	if grant != uuid.Nil {
		n, err := a.q.RevokeOAuthGrant(ctx, db.RevokeOAuthGrantParams{ID: grant, Reason: "revoked"})
		if err != nil {
			a.log.ErrorContext(ctx, "revoking a grant", "error", err)
			return nil, oidc.ErrServerError()
		}
		a.revoked(grant, uuid.Nil)
		if n > 0 {
			a.auditBestEffort(ctx, church, user, c.ID, auditGrantRevoked, audit.Allowed, grant)
		}
	}
	return op.NewResponse(nil), nil
}

// accessTokenClaims returns the claims of token if it is a valid access token of ours.
func (a *AS) accessTokenClaims(ctx context.Context, token string) *tokens.Claims {
	var got *tokens.Claims
	var auds []string
	for _, r := range a.resources {
		auds = append(auds, r)
	}
	for _, r := range a.extraResources {
		auds = append(auds, r)
	}
	v := &tokens.Verifier{Issuer: a.cfg.Issuer, Audiences: auds, Keys: a.cfg.Keys.Public,
		Check: func(_ context.Context, c *tokens.Claims) error { got = c; return nil }}
	if _, err := v.Verify(ctx, token); err != nil {
		return nil
	}
	return got
}

// Keys serves the JSON Web Key Set: every key that still verifies.
func (s *opServer) Keys(ctx context.Context, _ *op.Request[struct{}]) (*op.Response, error) {
	set, err := s.as.cfg.Keys.JWKS(ctx)
	if err != nil {
		s.as.log.ErrorContext(ctx, "loading the key set", "error", err)
		return nil, op.AsStatusError(oidc.ErrServerError(), http.StatusInternalServerError)
	}
	resp := op.NewResponse(set)
	resp.Header.Set("Cache-Control", "public, max-age=300")
	return resp, nil
}

// tokenError passes OAuth errors through and turns anything else into a logged server_error.
func (s *opServer) tokenError(ctx context.Context, err error) error {
	var oe *oidc.Error
	if errors.As(err, &oe) {
		return oe
	}
	s.as.log.ErrorContext(ctx, "token endpoint", "error", err)
	return oidc.ErrServerError()
}

// validChallenge reports whether s can be an S256 code challenge: 43 base64url characters.
func validChallenge(s string) bool {
	if len(s) != 43 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// validVerifier reports whether s is a PKCE code verifier (RFC 7636 §4.1).
func validVerifier(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// list is the scope set as a non-nil slice (a nil one would be stored as NULL).
func list(s capability.ScopeSet) []string {
	if l := s.List(); l != nil {
		return l
	}
	return []string{}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// issEncoder adds `iss` (RFC 9207) to the error redirects the library builds.
type issEncoder struct{ iss string }

func (e issEncoder) Encode(src any, dst map[string][]string) error {
	if err := oidc.NewEncoder().Encode(src, dst); err != nil {
		return err
	}
	dst["iss"] = []string{e.iss}
	return nil
}

// tokenRequests guards the token and revocation endpoints: every response is no-store; the
// request must be a POST with an application/x-www-form-urlencoded body of at most 64 KiB in
// which no parameter repeats (RFC 6749 §3.1; resource may, RFC 8707) and ";" separates nothing
// (query.go); parameters in the URL query are ignored.
func tokenRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Pragma", "no-cache")
		fail := func(status int, desc string) {
			writeJSON(w, status, map[string]string{"error": "invalid_request", "error_description": desc})
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			fail(http.StatusMethodNotAllowed, "use POST")
			return
		}
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/x-www-form-urlencoded" {
			fail(http.StatusBadRequest, "the body must be application/x-www-form-urlencoded")
			return
		}
		qe, err := readForm(w, r, 64<<10, false, repeatable...) // the query is ignored (below)
		if err != nil {
			fail(http.StatusBadRequest, "unreadable form body")
			return
		}
		if qe != nil {
			fail(http.StatusBadRequest, qe.Error())
			return
		}
		r.Form = url.Values(r.PostForm)
		next.ServeHTTP(w, r)
	})
}

// maxAge is the OpenID Connect max_age of a request, as stored (nil: none; capped at a year).
func maxAge(v *uint) *int32 {
	if v == nil {
		return nil
	}
	n := int32(min(*v, 366*24*3600))
	return &n
}

// grantOf is *id, or uuid.Nil.
func grantOf(id *uuid.UUID) uuid.UUID {
	if id == nil {
		return uuid.Nil
	}
	return *id
}
